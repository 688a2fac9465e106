import type { JsonValue } from "@bufbuild/protobuf";
import { gatewayError, errorMessage } from "../../../wire/errors.js";

/**
 * Splits a JSON object body into its parts while it streams in, so that a large body is never held
 * whole: each top-level field once its value is complete, and the elements of the arrays of the
 * `streamed` fields one by one, each as soon as it is complete. Values are parsed by `JSON.parse`
 * (which also checks them); this file only finds where each begins and ends, and checks the
 * grammar between them. It reads bytes: every structural character of JSON is ASCII, and no byte
 * of a multi-byte UTF-8 sequence is, so a slice can end anywhere without harm. A malformed or
 * truncated body is a 400 that says where.
 */
export type BodyPart =
  | { kind: "field"; name: string; value: JsonValue }
  /** A streamed field's array begins; its elements follow. */
  | { kind: "array"; name: string }
  | { kind: "element"; name: string; index: number; value: JsonValue };

enum State {
  Root,
  KeyOrClose,
  Key,
  Colon,
  Value,
  CommaOrClose,
  ElementOrClose,
  Element,
  ElementCommaOrClose,
  Done,
}

/** Where a captured value goes once complete. */
enum Target {
  Key,
  Field,
  Element,
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** A byte that ends a bare value (number, true, false, null). */
function endsScalar(byte: number): boolean {
  return isSpace(byte) || byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET;
}

export class JsonBodySplitter {
  private state = State.Root;
  /** Bytes of the body before the current slice. */
  private offset = 0;
  private key = "";
  private index = 0;

  // The value being captured: its slices so far, where it started, and the scanner's state in it.
  private capturing = false;
  private target = Target.Field;
  private parts: Buffer[] = [];
  private start = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;

  // Position of the next backslash of the current slice at or after the scan position (-1: none
  // left), found once per slice rather than once per string.
  private backslash = -1;

  constructor(private readonly streamed: ReadonlySet<string>) {}

  get bytesRead(): number {
    return this.offset;
  }

  /** The parts that this slice completes, in body order. */
  write(slice: Uint8Array): BodyPart[] {
    const buf = Buffer.isBuffer(slice) ? slice : Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength);
    const out: BodyPart[] = [];
    this.backslash = buf.indexOf(BACKSLASH);
    let i = 0;
    const n = buf.length;
    if (this.capturing) this.start = 0;
    while (i < n) {
      if (this.capturing) {
        const end = this.scan(buf, i);
        if (end < 0) break;
        this.complete(buf, end, out);
        i = end;
        continue;
      }
      const byte = buf[i]!;
      if (isSpace(byte)) {
        i++;
        continue;
      }
      switch (this.state) {
        case State.Root:
          if (byte !== OPEN_BRACE) throw gatewayError(400, "The request body must be a JSON object");
          this.state = State.KeyOrClose;
          i++;
          break;
        case State.KeyOrClose:
        case State.Key:
          if (byte === CLOSE_BRACE && this.state === State.KeyOrClose) {
            this.state = State.Done;
            i++;
          } else if (byte === QUOTE) {
            i = this.begin(buf, i, Target.Key);
          } else {
            throw this.unexpected(i, byte, "a field name");
          }
          break;
        case State.Colon:
          if (byte !== COLON) throw this.unexpected(i, byte, `':' after the field name '${this.key}'`);
          this.state = State.Value;
          i++;
          break;
        case State.Value:
          if (byte === OPEN_BRACKET && this.streamed.has(this.key)) {
            out.push({ kind: "array", name: this.key });
            this.index = 0;
            this.state = State.ElementOrClose;
            i++;
          } else {
            i = this.begin(buf, i, Target.Field);
          }
          break;
        case State.CommaOrClose:
          if (byte === COMMA) this.state = State.Key;
          else if (byte === CLOSE_BRACE) this.state = State.Done;
          else throw this.unexpected(i, byte, `',' or '}' after the field '${this.key}'`);
          i++;
          break;
        case State.ElementOrClose:
          if (byte === CLOSE_BRACKET) {
            this.state = State.CommaOrClose;
            i++;
          } else {
            i = this.begin(buf, i, Target.Element);
          }
          break;
        case State.Element:
          i = this.begin(buf, i, Target.Element);
          break;
        case State.ElementCommaOrClose:
          if (byte === COMMA) this.state = State.Element;
          else if (byte === CLOSE_BRACKET) this.state = State.CommaOrClose;
          else throw this.unexpected(i, byte, `',' or ']' after ${this.where(this.index - 1)}`);
          i++;
          break;
        case State.Done:
          throw this.malformed(`unexpected data after the end of the JSON object at byte ${this.offset + i}`);
      }
    }
    // A value that goes on into the next slice keeps its bytes of this one (copied: the slice's
    // memory belongs to the caller).
    if (this.capturing) this.parts.push(Buffer.from(buf.subarray(this.start)));
    this.offset += n;
    return out;
  }

  /** The body is complete: anything unfinished is a truncated body. An empty body is `{}`. */
  end(): void {
    if (this.state === State.Done || (this.state === State.Root && this.offset === 0)) return;
    if (this.state === State.Root) throw gatewayError(400, "The request body must be a JSON object");
    const inside = this.capturing
      ? this.target === Target.Element
        ? ` inside ${this.where()}`
        : this.target === Target.Field
          ? ` inside the field '${this.key}'`
          : " inside a field name"
      : "";
    throw this.malformed(`the body ends before its JSON object is complete${inside}`);
  }

  /** Starts capturing the value that begins at `i`; the index to scan it from. */
  private begin(buf: Buffer, i: number, target: Target): number {
    const byte = buf[i]!;
    if (target === Target.Key ? byte !== QUOTE : endsScalar(byte))
      throw this.unexpected(i, byte, target === Target.Key ? "a field name" : "a value");
    this.capturing = true;
    this.target = target;
    this.parts = [];
    this.start = i;
    this.depth = byte === OPEN_BRACE || byte === OPEN_BRACKET ? 1 : 0;
    this.inString = byte === QUOTE;
    this.escaped = false;
    this.scalar = this.depth === 0 && !this.inString;
    return this.scalar ? i : i + 1;
  }

  /**
   * Scans the value being captured from `i`: the index just past its end, or -1 when it goes on
   * into the next slice. Strings are skipped with indexOf, as most of a body is string content.
   */
  private scan(buf: Buffer, i: number): number {
    const n = buf.length;
    if (this.scalar) {
      while (i < n && !endsScalar(buf[i]!)) i++;
      return i < n ? i : -1;
    }
    for (;;) {
      if (this.inString) {
        if (this.escaped) {
          if (i >= n) return -1;
          this.escaped = false;
          i++;
        }
        for (;;) {
          const quote = buf.indexOf(QUOTE, i);
          if (this.backslash !== -1 && this.backslash < i) this.backslash = buf.indexOf(BACKSLASH, i);
          if (this.backslash !== -1 && (quote === -1 || this.backslash < quote)) {
            i = this.backslash + 2;
            if (i > n) {
              this.escaped = true;
              return -1;
            }
            continue;
          }
          if (quote === -1) return -1;
          i = quote + 1;
          this.inString = false;
          break;
        }
        if (this.depth === 0) return i;
      }
      for (; i < n; i++) {
        const byte = buf[i]!;
        if (byte === QUOTE) {
          this.inString = true;
          i++;
          break;
        }
        if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
        else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --this.depth === 0) return i + 1;
      }
      if (!this.inString) return -1;
    }
  }

  private complete(buf: Buffer, end: number, out: BodyPart[]): void {
    const tail = buf.subarray(this.start, end);
    const bytes = this.parts.length === 0 ? tail : Buffer.concat([...this.parts, tail]);
    this.parts = [];
    this.capturing = false;
    const startByte = this.offset + end - bytes.length;
    let value: JsonValue;
    try {
      value = JSON.parse(bytes.toString("utf8")) as JsonValue;
    } catch (err) {
      const what =
        this.target === Target.Element
          ? this.where()
          : this.target === Target.Field
            ? `the field '${this.key}'`
            : "a field name";
      throw this.malformed(`${what} (from byte ${startByte}): ${errorMessage(err)}`);
    }
    switch (this.target) {
      case Target.Key:
        this.key = value as string;
        this.state = State.Colon;
        break;
      case Target.Field:
        out.push({ kind: "field", name: this.key, value });
        this.state = State.CommaOrClose;
        break;
      case Target.Element:
        out.push({ kind: "element", name: this.key, index: this.index++, value });
        this.state = State.ElementCommaOrClose;
        break;
    }
  }

  private where(index = this.index): string {
    return `${this.key}[${index}]`;
  }

  private unexpected(i: number, byte: number, expected: string) {
    const found =
      byte >= 0x20 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16).padStart(2, "0")}`;
    return this.malformed(`expected ${expected} at byte ${this.offset + i}, found ${found}`);
  }

  private malformed(detail: string) {
    return gatewayError(400, `Malformed JSON body: ${detail}`);
  }
}
