import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { isObject } from "../providers/json-shape.js";
import { decodeText, mediaKind, parseDataUrl, withText } from "./data-urls.js";
import { CONTROL_KEYS, KEYWORD, PROTOCOL_KEYS } from "./protocol-words.js";

/** Which request shape a body has: an embeddings `input` of numbers is text the filters cannot read. */
export type ScannedShape = "chat" | "embeddings";

/** What the walk hands the filters (request-content.ts). */
export interface StringScanner {
  /** A text the provider will receive; returns it as it must be sent. */
  text(value: string): string;
  /** An object key outside the protocol's words; returns it as it must be sent. */
  key(value: string): string;
  /** Two keys of one object became the same key when rewritten: the object cannot be sent rewritten. */
  keysCollide(field: string): never;
  /** A value the filters cannot read (token ids, a binary file), at `field`. */
  unreadable(field: string, what: string): void;
}

/**
 * Every string of a body as its provider will get it, keys included, rewritten in place. The body
 * is the pipeline's (the gateway's own fields already removed, Responses and Messages already chat),
 * so every field a caller can set and the gateway does not consume is walked, whatever its name:
 * a per-field list would miss the next field a provider adds. Left alone are only the protocol's
 * own words (protocol-words.ts) and media no filter reads; decoded first are text `data:` URLs.
 *
 * - `data:` URLs: text media (text/*, JSON, XML, CSV, YAML…) is decoded, scanned and encoded
 *   again; images, audio and video are skipped; other media (PDF, …) cannot be read. A `file_data`
 *   value is a file's content: it is read when it is a text `data:` URL, and cannot be read otherwise.
 * - `input_audio.data` is audio (base64): skipped.
 * - embeddings `input` of token ids cannot be read.
 */
export function scanStrings(body: JsonObject, shape: ScannedShape, scanner: StringScanner): void {
  if (
    shape === "embeddings" &&
    Array.isArray(body.input) &&
    body.input.some((item) => typeof item === "number" || Array.isArray(item))
  ) {
    scanner.unreadable("input", "token ids");
  }
  new Walk(scanner).object(body, "");
}

const DATA_SCHEME = /^data:/i;

class Walk {
  /** The path of the value being walked, for errors: protocol keys and indexes only (see `field`). */
  private readonly path: (string | number)[] = [];

  constructor(private readonly scanner: StringScanner) {}

  object(object: JsonObject, parent: string): void {
    let renamed: Map<string, string> | undefined;
    for (const key of Object.keys(object)) {
      const sent = PROTOCOL_KEYS.has(key) ? key : this.scanner.key(key);
      if (sent !== key) (renamed ??= new Map()).set(key, sent);
      this.path.push(key);
      const value = object[key]!;
      const rewritten = this.value(value, key, parent);
      if (rewritten !== value) object[key] = rewritten;
      this.path.pop();
    }
    if (renamed) this.rename(object, renamed);
  }

  private value(value: JsonValue, key: string, parent: string): JsonValue {
    if (typeof value === "string") return this.string(value, key, parent);
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        this.path.push(index);
        const item = value[index]!;
        const rewritten = this.value(item, key, parent);
        if (rewritten !== item) value[index] = rewritten;
        this.path.pop();
      }
    } else if (isObject(value)) {
      this.object(value, key);
    }
    return value;
  }

  private string(value: string, key: string, parent: string): string {
    if (CONTROL_KEYS.has(key) && KEYWORD.test(value)) return value;
    if (key === "data" && parent === "input_audio") return value;
    if (key === "file_data" || DATA_SCHEME.test(value)) return this.dataUrl(value, key === "file_data");
    return this.scanner.text(value);
  }

  private dataUrl(value: string, isFile: boolean): string {
    const url = parseDataUrl(value);
    if (url === undefined) {
      // Prose that starts with "data:" is prose; a file's content that is no data: URL is raw bytes.
      if (!isFile) return this.scanner.text(value);
      this.scanner.unreadable(this.field(), "a file that is not a data: URL");
      return value;
    }
    const kind = mediaKind(url.mediaType);
    if (kind === "media" && !isFile) return value;
    const text = kind === "text" ? decodeText(url) : undefined;
    if (text === undefined) {
      this.scanner.unreadable(this.field(), `${url.mediaType} content`);
      return value;
    }
    const rewritten = this.scanner.text(text);
    return rewritten === text ? value : withText(url, rewritten);
  }

  /**
   * An object whose caller-chosen keys were rewritten (redacted), rebuilt in place and in order:
   * the body object is the one the call sends. Values were rewritten the same way (a schema's
   * `required` list, the arguments of a tool call), so they still name the same keys.
   */
  private rename(object: JsonObject, renamed: ReadonlyMap<string, string>): void {
    const entries = Object.entries(object).map(([key, value]): [string, JsonValue] => [renamed.get(key) ?? key, value]);
    if (new Set(entries.map(([key]) => key)).size !== entries.length) this.scanner.keysCollide(this.field());
    for (const key of Object.keys(object)) delete object[key];
    for (const [key, value] of entries) object[key] = value;
  }

  /**
   * `messages[0].content[1].file.file_data`; a key the caller chose is shown as `*`, since it may
   * be what a filter matched.
   */
  private field(): string {
    let out = "";
    for (const step of this.path) {
      if (typeof step === "number") out += `[${step}]`;
      else out += `${out === "" ? "" : "."}${PROTOCOL_KEYS.has(step) ? step : "*"}`;
    }
    return out === "" ? "the body" : out;
  }
}
