import http from "node:http";
import https from "node:https";
import net from "node:net";
import { DestinationRefused, type DestinationGuard, type VettedDestination } from "../../egress/destination-guard.js";
import { pinnedLookup } from "../../egress/pinned-lookup.js";
import type { ReleasedSecret } from "../../wire/host-protocol.js";

/**
 * The HTTP fetch tool. Every hop (the request and each redirect) is vetted before anything is
 * sent: never the gateway's own ports, on any host, and only public addresses unless the operator
 * allowed the host (the destination guard, shared with private endpoints); the connection then
 * goes to exactly the vetted addresses, so DNS cannot be rebound between check and connect. In
 * manual approval mode the user is asked (method and URL, never a secret) before the first request.
 *
 * The model refers to a vault secret as `{{secrets.NAME}}` in a header value or the body and never
 * sees its value: the placeholder is filled in only when the vault releases that secret to exactly
 * the request's hostname (the gateway decides, per request), and over http only when the secret
 * is stored with `allow_http`. A request whose secret is not released is not sent at all.
 * Redirects are followed by hand, at most 5: each hop's secrets are released for that hop's URL
 * again, and a request that carries secrets never follows a redirect to another host (or from
 * https to http); its 3xx is returned instead. Released values are masked in everything that goes
 * back to the model: body, shown headers, URL and note.
 */
export interface FetchArguments {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface FetchContext {
  /** The secrets the vault releases to exactly this URL's host (over http, only those that allow it). */
  release(url: string): Promise<ReleasedSecret[]>;
  /** Vets each hop's host and answers the addresses to connect to. */
  guard: DestinationGuard;
  /** Ports never called, on any host: the gateway's own. */
  gatewayPorts: readonly number[];
  /** Asked once, before the first request is sent; false: nothing is sent. */
  approve(method: string, url: URL): Promise<boolean>;
  timeoutMs: number;
  bodyBytes: number;
  signal: AbortSignal;
}

export interface FetchResult {
  status: number;
  url: string;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
  note?: string;
}

const PLACEHOLDER = /\{\{\s*secrets\.([a-z][a-z0-9_]*)\s*\}\}/g;
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const MAX_REDIRECTS = 5;
/** Response headers worth showing the model; others (cookies included) stay out of its context. */
const SHOWN_HEADERS = ["content-type", "content-length", "location", "retry-after"];

export class FetchRefused extends Error {}

export async function runFetch(args: FetchArguments, context: FetchContext): Promise<FetchResult> {
  let url = parseUrl(args.url);
  let method = (args.method ?? "GET").toUpperCase();
  if (!METHODS.has(method)) throw new FetchRefused(`method must be one of ${[...METHODS].join(", ")}`);
  const headerTemplates = Object.entries(args.headers ?? {}).filter(([name]) => name.toLowerCase() !== "host");
  for (const [name, value] of headerTemplates)
    if (typeof value !== "string") throw new FetchRefused(`header ${name} must be a string`);
  let bodyTemplate = args.body;
  const wanted = referencedSecrets([...headerTemplates.map(([, value]) => value), bodyTemplate ?? ""]);
  // Every hop's: a server may echo an earlier hop's value into the URL it redirects to.
  const releasedSoFar: ReleasedSecret[] = [];
  for (let hop = 0; ; hop++) {
    const destination = await vetted(url, hop, context);
    const released = wanted.size === 0 ? [] : await context.release(url.href);
    releasedSoFar.push(...released);
    const values = new Map(
      released.filter((secret) => wanted.has(secret.name)).map((secret) => [secret.name, secret.value]),
    );
    const missing = [...wanted].filter((name) => !values.has(name));
    if (missing.length > 0) {
      const overHttp =
        url.protocol === "http:" ? " over http (only a secret stored with allow_http goes to an http URL)" : "";
      throw new FetchRefused(
        `secret ${missing.map((name) => `"${name}"`).join(", ")} is not released to host ${url.hostname}${overHttp}; ` +
          "nothing was sent",
      );
    }
    if (hop === 0 && !(await context.approve(method, url)))
      throw new FetchRefused("the user did not allow this request; nothing was sent");
    const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: string) => values.get(name) ?? "");
    const headers = Object.fromEntries(headerTemplates.map(([name, value]) => [name, fill(value)]));
    const response = await send(
      url,
      destination,
      method,
      headers,
      bodyTemplate === undefined ? undefined : fill(bodyTemplate),
      context,
    );
    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && typeof location === "string") {
      const next = new URL(location, url);
      const leavesHost = next.hostname !== url.hostname || (url.protocol === "https:" && next.protocol !== "https:");
      const refusal =
        hop >= MAX_REDIRECTS
          ? `stopped after ${MAX_REDIRECTS} redirects`
          : wanted.size > 0 && leavesHost
            ? `redirect to ${next.host} not followed: the request carries secrets bound to ${url.hostname}`
            : undefined;
      if (refusal || !(next.protocol === "http:" || next.protocol === "https:")) {
        return finish(
          url,
          response,
          { raw: Buffer.alloc(0), more: false },
          0,
          masksOf(releasedSoFar),
          refusal ?? `redirect to a ${next.protocol} URL not followed`,
        );
      }
      response.discard();
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        method = "GET";
        bodyTemplate = undefined;
      }
      url = next;
      continue;
    }
    const masks = masksOf(releasedSoFar);
    // Past the cut by up to the longest value: one that the cut would split is still recognized and masked whole.
    const body = await response.read(context.bodyBytes + Math.max(0, ...masks.map((mask) => mask.needle.length)));
    return finish(url, response, body, context.bodyBytes, masks);
  }
}

/**
 * The addresses one hop may connect to. A refusal names the host alone (never the URL, whose
 * query may carry anything) and not the address it resolved to.
 */
async function vetted(url: URL, hop: number, context: FetchContext): Promise<VettedDestination> {
  const what = hop === 0 ? "request" : "redirect";
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  if (context.gatewayPorts.includes(port))
    throw new FetchRefused(
      `${what} to host ${url.hostname} refused: port ${port} is the gateway's own; nothing was sent there`,
    );
  try {
    return await context.guard.vet(url);
  } catch (err) {
    if (!(err instanceof DestinationRefused)) throw err;
    if (err.reason === "unresolved")
      throw new FetchRefused(
        `${what} to host ${err.host} refused: the host could not be resolved; nothing was sent there`,
      );
    const is = net.isIP(err.host) ? "is" : "resolves to";
    throw new FetchRefused(
      `${what} to host ${err.host} refused: it ${is} a loopback, private, link-local or cloud metadata address, ` +
        "which only hosts in GATEWAY_INTERN_FETCH_ALLOWED_HOSTS may be; nothing was sent there",
    );
  }
}

function finish(url: URL, response: Sent, body: Read, bodyBytes: number, masks: Mask[], note?: string): FetchResult {
  response.discard();
  const masked = (text: string) => maskedCut(Buffer.from(text), Infinity, masks).text;
  const headers: Record<string, string> = {};
  for (const name of SHOWN_HEADERS) {
    const value = response.headers[name];
    if (typeof value === "string") headers[name] = masked(value);
  }
  const shown = maskedCut(body.raw, bodyBytes, masks);
  const truncated = body.more || shown.end < body.raw.length;
  return {
    status: response.status,
    url: masked(url.href),
    headers,
    body: shown.text,
    truncated,
    ...(note ? { note: masked(note) } : {}),
  };
}

/**
 * An echoed secret goes back to the model as its placeholder, never as its value: as sent, or
 * percent-encoded into a URL.
 */
interface Mask {
  needle: Buffer;
  placeholder: string;
}

function masksOf(released: ReleasedSecret[]): Mask[] {
  const placeholders = new Map<string, string>();
  for (const secret of released) {
    if (secret.value === "") continue;
    for (const form of [secret.value, encodeURIComponent(secret.value)])
      if (!placeholders.has(form)) placeholders.set(form, `{{secrets.${secret.name}}}`);
  }
  return [...placeholders].map(([form, placeholder]) => ({ needle: Buffer.from(form), placeholder }));
}

/**
 * The first `limit` bytes of `raw` as text with every value that starts in them replaced by its
 * placeholder, whole even where it runs past `limit` (`end` is where the text stops in `raw`).
 * Values are found in the bytes before anything is cut or decoded, and overlapping ones are all
 * masked, so no part of a value is left over.
 */
function maskedCut(raw: Buffer, limit: number, masks: Mask[]): { text: string; end: number } {
  const found: Array<{ start: number; end: number; placeholder: string }> = [];
  for (const { needle, placeholder } of masks) {
    for (let start = raw.indexOf(needle); start !== -1 && start < limit; start = raw.indexOf(needle, start + 1))
      found.push({ start, end: start + needle.length, placeholder });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  let text = "";
  let at = 0;
  for (const match of found) {
    if (match.end <= at) continue;
    text += (match.start > at ? raw.subarray(at, match.start).toString("utf8") : "") + match.placeholder;
    at = match.end;
  }
  const end = Math.max(at, Math.min(limit, raw.length));
  return { text: text + raw.subarray(at, end).toString("utf8"), end };
}

function referencedSecrets(texts: string[]): Set<string> {
  const names = new Set<string>();
  for (const text of texts) for (const match of text.matchAll(PLACEHOLDER)) names.add(match[1]!);
  return names;
}

function parseUrl(raw: unknown): URL {
  if (typeof raw !== "string") throw new FetchRefused("url must be a string");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchRefused(`url is not a valid absolute URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new FetchRefused("url must be http or https");
  if (referencedSecrets([raw]).size > 0)
    throw new FetchRefused("secrets go into headers or the body, never into the URL");
  return url;
}

/** Up to `limit` bytes of a response body; `more` when the response had more than that. */
interface Read {
  raw: Buffer;
  more: boolean;
}

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  read(limit: number): Promise<Read>;
  discard(): void;
}

/** Connects to the vetted addresses only, on a connection of its own: a pooled one could lead elsewhere. */
function send(
  url: URL,
  destination: VettedDestination,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  context: FetchContext,
): Promise<Sent> {
  const client = url.protocol === "https:" ? https : http;
  const lookup = pinnedLookup(destination.addresses);
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method, headers, signal: context.signal, timeout: context.timeoutMs, lookup, agent: false },
      (res) => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          discard: () => res.destroy(),
          read: (limit) =>
            new Promise((done, fail) => {
              const chunks: Buffer[] = [];
              let size = 0;
              let more = false;
              res.on("data", (chunk: Buffer) => {
                if (more) return;
                const part = chunk.subarray(0, limit - size);
                chunks.push(part);
                size += part.length;
                if (part.length < chunk.length) {
                  more = true;
                  res.destroy();
                  done({ raw: Buffer.concat(chunks), more });
                }
              });
              res.once("end", () => done({ raw: Buffer.concat(chunks), more }));
              res.once("error", (err) => (more ? undefined : fail(err)));
            }),
        });
      },
    );
    req.once("timeout", () => req.destroy(new FetchRefused(`no answer within ${context.timeoutMs} ms`)));
    req.once("error", reject);
    req.end(body);
  });
}
