import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";

/**
 * Connect, gRPC and gRPC-Web calls written byte for byte, for what a generated client will not
 * send: a compressed body it did not compress itself, a message over a limit, a body the server
 * may refuse to read. Each answer is read whole, whatever the server did with the rest of the body.
 */
export interface WireReply {
  status: number;
  headers: Record<string, string>;
  /** The gRPC trailers; a gRPC-Web body's trailer frame is read into them too. */
  trailers: Record<string, string>;
  body: Buffer;
}

/**
 * `mebibytes` MiB of spaces as a gzip stream, built without compressing them all: one member of
 * 1 MiB repeated, which gunzip reads as one stream (concatenated members are valid gzip). 1 GiB
 * comes to about 1 MB.
 */
export function gzipBomb(mebibytes: number): Buffer {
  const member = gzipSync(Buffer.alloc(1024 * 1024, " "), { level: 9 });
  return Buffer.concat(Array.from({ length: mebibytes }, () => member));
}

/** A gRPC / Connect streaming / gRPC-Web message frame: flags, length, payload. */
export function envelope(payload: Buffer, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** One request over HTTP/1.1; a write the server cut off does not fail it if an answer came. */
export function h1Request(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<WireReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path,
        headers: { ...headers, "content-length": String(body.length) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const reply = {
            status: res.statusCode ?? 0,
            headers: flat(res.headers),
            trailers: {},
            body: Buffer.concat(chunks),
          };
          resolve({ ...reply, trailers: grpcWebTrailers(reply) });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** One request over h2c on a session of its own, closed afterwards; resolves once the answer has ended. */
export async function h2Request(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<WireReply> {
  const session = http2.connect(base);
  try {
    return await new Promise<WireReply>((resolve, reject) => {
      session.once("error", reject);
      const stream = session.request({ ":method": "POST", ":path": path, ...headers });
      let status = 0;
      let head: Record<string, string> = {};
      let trailers: Record<string, string> = {};
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        head = flat(h);
      });
      stream.on("trailers", (t) => (trailers = flat(t)));
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      // The server may answer before it has read the whole body: once the answer has ended, the
      // call is over and what is left unsent is dropped, as gRPC clients do.
      stream.on("error", () => undefined);
      stream.once("end", () => {
        if (status === 0) reject(new Error("the stream ended without an answer"));
        else resolve({ status, headers: head, trailers, body: Buffer.concat(chunks) });
        stream.close(http2.constants.NGHTTP2_CANCEL);
      });
      stream.once("close", () => reject(new Error(`no answer (stream reset with code ${stream.rstCode})`)));
      stream.end(body);
    });
  } finally {
    session.close();
  }
}

/** grpc-status of a gRPC or gRPC-Web answer: in the trailers, or in the head of a trailers-only answer. */
export function grpcStatusOf(reply: WireReply): string | undefined {
  return reply.trailers["grpc-status"] ?? reply.headers["grpc-status"];
}

/** A gRPC-Web body ends with a trailer frame (flag 0x80) of `name: value` lines. */
function grpcWebTrailers(reply: Omit<WireReply, "trailers">): Record<string, string> {
  if (!reply.headers["content-type"]?.startsWith("application/grpc-web")) return {};
  const out: Record<string, string> = {};
  for (let at = 0; at + 5 <= reply.body.length; ) {
    const length = reply.body.readUInt32BE(at + 1);
    if (reply.body[at]! & 0x80) {
      for (const line of reply.body
        .subarray(at + 5, at + 5 + length)
        .toString("utf8")
        .split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
    }
    at += 5 + length;
  }
  return out;
}

function flat(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : String(value);
  return out;
}

/**
 * How far a process's resident memory rose above where it stood while `run` ran, in MiB: its peak
 * (VmHWM) is reset to the current size first (Linux `clear_refs`), so only what `run` caused
 * counts, however briefly it was held.
 */
export async function peakRssGrowthMiB(pid: number, run: () => Promise<void>): Promise<number> {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = statusKiB(pid, "VmRSS");
  await run();
  return (statusKiB(pid, "VmHWM") - before) / 1024;
}

function statusKiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}
