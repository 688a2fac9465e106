import http from "node:http";
import { isFuzzObject, type FuzzJson, type FuzzObject } from "./fuzz-json.js";
import { responseField } from "./fuzz-shapes.js";

/**
 * Sending a hostile request byte for byte, and what every answer must be: 2xx, or 4xx
 * with the API's envelope whose `code` is the HTTP status; never 5xx; no stack trace, SQL or
 * source path in any body; and an accepted value reads back exactly as it was sent.
 */
export interface Answer {
  status: number;
  text: string;
  /** Why there was no answer (status 0). */
  failure?: string;
}

export interface Outgoing {
  key?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** Only a guard against a request that never ends; nothing is measured with it. */
const HANG_GUARD_MS = 60_000;

export function send(
  base: string,
  method: string,
  path: string,
  { key, headers = {}, body }: Outgoing = {},
): Promise<Answer> {
  const url = new URL(base);
  const payload = typeof body === "string" ? Buffer.from(body) : body;
  return new Promise((resolve) => {
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...headers,
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload ? { "content-length": String(payload.length) } : {}),
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (err) => resolve({ status: 0, text: "", failure: `response cut: ${err.message}` }));
      },
    );
    req.setTimeout(HANG_GUARD_MS, () => req.destroy(new Error("no answer")));
    // A server may answer before it has read the whole body; the answer is what counts.
    req.on("error", (err) => {
      if (!answered) resolve({ status: 0, text: "", failure: err.message });
    });
    req.end(payload);
  });
}

const LEAKS: Array<[string, RegExp]> = [
  ["a stack trace", / {4}at /],
  ["SQL text", /SELECT |INSERT |syntax error at or near|violates/],
  ["a source path", /\/work\/|node_modules|\.ts:/],
];

/** What is wrong with an answer, whatever the request was. */
export function answerProblems(answer: Answer): string[] {
  const problems: string[] = [];
  if (answer.status === 0) return [`no answer (${answer.failure})`];
  if (answer.status >= 500) problems.push(`answered ${answer.status}`);
  else if (answer.status < 200 || (answer.status >= 300 && answer.status < 400))
    problems.push(`answered ${answer.status}`);
  if (answer.status >= 400) {
    const envelope = envelopeProblem(answer);
    if (envelope) problems.push(envelope);
  }
  for (const [what, pattern] of LEAKS) if (pattern.test(answer.text)) problems.push(`the body shows ${what}`);
  return problems;
}

function envelopeProblem({ status, text }: Answer): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "the error body is not JSON";
  }
  if (!isFuzzObject(body as FuzzJson) || Object.keys(body as object).join() !== "error")
    return 'the error body is not {"error": …}';
  const error = (body as { error: unknown }).error as Record<string, unknown> | null;
  if (error === null || typeof error !== "object") return "error is not an object";
  if (error.code !== status) return `error.code ${String(error.code)} is not the HTTP status`;
  if (typeof error.message !== "string" || error.message === "") return "error.message is not a non-empty string";
  // `type` and `param`: another API's names on the routes of its surface ((gateway.v1.error_dialect)).
  const extra = Object.keys(error).filter((k) => !["code", "message", "metadata", "type", "param"].includes(k));
  if (extra.length > 0) return `error has unexpected fields ${extra.join(", ")}`;
  for (const name of ["type", "param"]) {
    if (name in error && (typeof error[name] !== "string" || error[name] === ""))
      return `error.${name} is not a non-empty string`;
  }
  return undefined;
}

/** A list stored as a set (guardrails' allow and ignore lists): each value once, in the order first sent. */
function sameSet(sent: FuzzJson, got: unknown): boolean {
  return Array.isArray(sent) && JSON.stringify(got) === JSON.stringify([...new Set(sent)]);
}

/** The top-level strings (and lists of strings) sent that an answer shows under the same name and changed. */
export function readBackProblems(sent: FuzzObject, body: unknown, where: string): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(sent)) {
    if (!isText(value)) continue;
    const got = responseField(body, name);
    if (got === undefined || got === null || typeof got !== typeof value || Array.isArray(got) !== Array.isArray(value))
      continue;
    if (JSON.stringify(got) !== JSON.stringify(value) && !sameInstant(value, got) && !sameSet(value, got))
      problems.push(`${where}: ${name} was sent as ${excerpt(value)} and reads back as ${excerpt(got)}`);
  }
  return problems;
}

/**
 * Timestamps travel with milliseconds (docs/api/conventions.md): another spelling of the same
 * instant, to the millisecond, is the value sent.
 */
function sameInstant(sent: unknown, got: unknown): boolean {
  if (typeof sent !== "string" || typeof got !== "string" || !ISO_TIME.test(sent)) return false;
  return Math.abs(Date.parse(sent) - Date.parse(got)) <= 1;
}

const ISO_TIME = /^[+-]?\d{4,6}-\d\d-\d\dT\d\d:\d\d/;

function isText(value: FuzzJson): value is string | string[] {
  return (
    typeof value === "string" || (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string"))
  );
}

export function excerpt(value: unknown, length = 120): string {
  const text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

export function parsed(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    return undefined;
  }
}

/** Runs `work` over `items` with at most `concurrency` at a time. */
export async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
