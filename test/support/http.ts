import http from "node:http";

/** REST calls against the facade over a real socket. Bodies stay `unknown`; read them with `at`. */
export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

export interface CallOptions {
  key?: string;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  raw?: string;
  headers?: Record<string, string>;
  /** Aborts the call: the client going away. */
  signal?: AbortSignal;
}

export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(base + path, { method, headers, body: payload, signal: options.signal });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Reads a nested value: at(body, "data", "budgets", 0, "scope"). */
export function at(value: unknown, ...path: Array<string | number>): unknown {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

/** A request the WHATWG URL parser would normalise (`..`, `%2e%2e`), sent byte for byte. */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  options: { key?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<{ status: number; body: unknown; headers: http.IncomingHttpHeaders }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...(options.key ? { authorization: `Bearer ${options.key}` } : {}), ...options.headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}
