/**
 * Chat carries media as URLs; Anthropic takes a `source` (base64 data or a URL), Gemini inline data
 * or a file URL: one mapping both ways, the codecs splitting a data: URL and the Messages format
 * building one.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** Undefined for anything but a base64 data: URL or an http(s) URL. */
export function sourceOfMediaUrl(url: string): JsonObject | undefined {
  const data = DATA_URL.exec(url);
  if (data) return { type: "base64", media_type: data[1] ?? "", data: data[2] ?? "" };
  if (/^https?:\/\//i.test(url)) return { type: "url", url };
  return undefined;
}

/** A base64 source as the data: URL sourceOfMediaUrl splits again. */
export function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}
