import https from "node:https";
import type { VettedDestination } from "../../../egress/destination-guard.js";
import { pinnedLookup } from "../../../egress/pinned-lookup.js";

/**
 * One HTTPS POST to a private endpoint, made safe to aim at a caller-chosen URL: it connects only
 * to the addresses the destination guard vetted (a custom `lookup`, so DNS cannot be rebound
 * between check and connect) while TLS still verifies the certificate against the hostname; it
 * never follows redirects; it reads at most MAX_BODY_BYTES; and one deadline covers connect, TLS,
 * headers and body. The outcome is coarse on purpose: callers report status codes and generic
 * wording, never upstream bodies or headers.
 */
export interface ProbeRequest {
  url: URL;
  destination: VettedDestination;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Trusted CA certificates (PEM). */
  ca: readonly string[];
}

export type ProbeOutcome =
  | { kind: "response"; status: number; body: Buffer; truncated: boolean }
  | { kind: "timeout" }
  | { kind: "tls_failed"; code: string }
  | { kind: "connect_failed"; code: string };

export const MAX_BODY_BYTES = 64 * 1024;

export function probeUpstream(request: ProbeRequest): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const payload = Buffer.from(request.body, "utf8");
    let req: ReturnType<typeof https.request>;
    try {
      req = https.request({
        method: "POST",
        protocol: "https:",
        host: request.destination.host,
        port: request.url.port === "" ? 443 : Number(request.url.port),
        path: request.url.pathname,
        headers: { ...request.headers, "content-length": String(payload.length) },
        lookup: pinnedLookup(request.destination.addresses),
        ca: [...request.ca],
        rejectUnauthorized: true,
        // A fresh connection each time: a pooled socket could lead somewhere else.
        agent: false,
      });
    } catch (err) {
      // Header values the HTTP layer refuses (e.g. a credential with control characters).
      resolve({ kind: "connect_failed", code: errorCode(err) });
      return;
    }
    const timer = setTimeout(() => finish({ kind: "timeout" }), request.timeoutMs);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        const room = MAX_BODY_BYTES - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          finish({ kind: "response", status: res.statusCode ?? 0, body: Buffer.concat(chunks), truncated: true });
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", () =>
        finish({ kind: "response", status: res.statusCode ?? 0, body: Buffer.concat(chunks), truncated: false }),
      );
      // The upstream cut the connection before the body ended (after "end", finish is a no-op).
      res.on("error", () => finish({ kind: "connect_failed", code: "ECONNRESET" }));
      res.on("close", () => finish({ kind: "connect_failed", code: "ECONNRESET" }));
    });
    req.on("error", (err) =>
      finish(
        isTlsError(err)
          ? { kind: "tls_failed", code: errorCode(err) }
          : { kind: "connect_failed", code: errorCode(err) },
      ),
    );
    req.end(payload);
  });
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH$)/;

function isTlsError(err: unknown): boolean {
  return TLS_CODE.test(errorCode(err));
}

/** The error's code (e.g. ECONNREFUSED), which is safe to show; never its message. */
function errorCode(err: unknown): string {
  const code = typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
  return /^[A-Z0-9_]{1,64}$/.test(code) ? code : "UNKNOWN";
}
