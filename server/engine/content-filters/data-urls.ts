/**
 * `data:` URLs in a request body, as the content filters read them (request-strings.ts): text
 * media is decoded and scanned like any text (and encoded again when a filter redacted it), images,
 * audio and video are media that no filter reads, and anything else (a PDF, a Word file, octet
 * streams) carries content the filters cannot read. providers/media-source.ts splits base64 URLs for
 * the codecs; this reading also takes the percent-encoded form and keeps the header as sent.
 *
 * @module
 */

export interface DataUrl {
  /** Everything up to and including the comma, kept as sent. */
  header: string;
  /** Lower case, without parameters; `text/plain` when the URL names none (RFC 2397). */
  mediaType: string;
  base64: boolean;
  payload: string;
}

export type MediaKind = "text" | "media" | "opaque";

const DATA_URL = /^data:([^,]*),/i;

export function parseDataUrl(value: string): DataUrl | undefined {
  const found = DATA_URL.exec(value);
  if (!found) return undefined;
  const meta = found[1]!;
  const parameters = meta.split(";");
  const mediaType = parameters[0]!.trim().toLowerCase() || "text/plain";
  const base64 = parameters.length > 1 && parameters.at(-1)!.trim().toLowerCase() === "base64";
  return { header: found[0], mediaType, base64, payload: value.slice(found[0].length) };
}

/** Text the filters can read, media they do not read, or content they cannot read. */
export function mediaKind(mediaType: string): MediaKind {
  if (
    mediaType.startsWith("text/") ||
    TEXT_TYPES.has(mediaType) ||
    mediaType.endsWith("+json") ||
    mediaType.endsWith("+xml")
  )
    return "text";
  if (mediaType.startsWith("image/") || mediaType.startsWith("audio/") || mediaType.startsWith("video/"))
    return "media";
  return "opaque";
}

/** The payload as text; undefined when it is not UTF-8 (binary content under a text media type) or not decodable. */
export function decodeText(url: DataUrl): string | undefined {
  try {
    return url.base64 ? UTF8.decode(Buffer.from(url.payload, "base64")) : decodeURIComponent(url.payload);
  } catch {
    return undefined;
  }
}

/** The URL with `text` as its payload, in the encoding it came in. */
export function withText(url: DataUrl, text: string): string {
  return url.header + (url.base64 ? Buffer.from(text, "utf8").toString("base64") : encodeURIComponent(text));
}

const TEXT_TYPES: ReadonlySet<string> = new Set([
  "application/json",
  "application/x-ndjson",
  "application/jsonl",
  "application/xml",
  "application/csv",
  "application/yaml",
  "application/x-yaml",
  "application/javascript",
  "application/sql",
  "application/x-sh",
]);

const UTF8 = new TextDecoder("utf-8", { fatal: true });
