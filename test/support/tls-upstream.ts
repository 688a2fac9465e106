import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

/**
 * A real HTTPS upstream for private endpoint validation, with a self-signed certificate for
 * `localhost` (and 127.0.0.1) made by the openssl CLI at test time. It answers like OpenAI
 * (`POST …/chat/completions`) or Anthropic (`POST …/v1/messages`); the model id of the request
 * picks a misbehaviour instead, so tests need no shared switch:
 *
 * - `mock-unauthorized`: 401, `mock-server-error`: 500, `mock-redirect`: 302 to a metadata address,
 * - `mock-hang`: never answers, `mock-wrong-shape`: 200 without choices/content,
 * - `mock-huge`: 200 with a body over 64 KiB,
 * - `mock-large-<n>` (chat completions): 200, a valid completion whose message is `n` characters.
 *
 * Error bodies and headers carry BODY_MARKER so tests can prove they never reach the caller.
 */
export const BODY_MARKER = "UPSTREAM-BODY-MARKER-7f3a";

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  apiKey: string | undefined;
  anthropicVersion: string | undefined;
  body: unknown;
}

export interface TlsUpstream {
  /** https://localhost:<port> */
  url: string;
  port: number;
  /** PEM of the self-signed certificate, to trust through GATEWAY_PRIVATE_ENDPOINT_CA_FILE. */
  certFile: string;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

const run = promisify(execFile);

export async function startTlsUpstream(): Promise<TlsUpstream> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "tls-upstream-"));
  const certFile = path.join(dir, "cert.pem");
  const keyFile = path.join(dir, "key.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  const requests: RecordedRequest[] = [];
  const server = https.createServer(
    { cert: await fs.readFile(certFile), key: await fs.readFile(keyFile) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          body = undefined;
        }
        const header = (name: string) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value.join(",") : value;
        };
        requests.push({
          method: req.method ?? "",
          path: req.url ?? "",
          authorization: header("authorization"),
          apiKey: header("x-api-key"),
          anthropicVersion: header("anthropic-version"),
          body,
        });
        answer(req.url ?? "", body, res);
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${port}`,
    port,
    certFile,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

function answer(url: string, body: unknown, res: import("node:http").ServerResponse): void {
  const model = typeof body === "object" && body !== null ? String((body as Record<string, unknown>).model) : "";
  const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", "x-upstream-marker": BODY_MARKER, ...headers });
    res.end(JSON.stringify(value));
  };
  switch (model) {
    case "mock-unauthorized":
      return json(401, { error: { message: `Incorrect API key provided. ${BODY_MARKER}` } });
    case "mock-server-error":
      return json(500, { error: { message: `internal failure ${BODY_MARKER}` } });
    case "mock-redirect":
      return json(302, { note: BODY_MARKER }, { location: "https://169.254.169.254/latest/meta-data/" });
    case "mock-hang":
      return; // the gateway's deadline has to end this one
    case "mock-wrong-shape":
      return json(200, { object: "list", data: [BODY_MARKER] });
    case "mock-huge":
      return json(200, { choices: [], content: [], padding: BODY_MARKER.repeat(10_000) });
  }
  if (url.endsWith("/v1/messages")) {
    return json(200, {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: "p" }],
      stop_reason: "max_tokens",
    });
  }
  if (url.endsWith("/chat/completions")) {
    const large = /^mock-large-(\d+)$/.exec(model);
    const content = large ? "p".repeat(Number(large[1])) : "p";
    return json(200, {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "length" }],
    });
  }
  json(404, { error: { message: `no route ${BODY_MARKER}` } });
}
