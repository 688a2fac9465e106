/**
 * A streaming check of JSON syntax over the whole content, in O(depth) memory: the bytes are fed in
 * chunks and nothing is kept but the parser state. It accepts a sequence of top-level JSON values
 * (RFC 8259 grammar) and reports at the end whether the content is
 * - `json`: exactly one top-level value, an object or an array;
 * - `ndjson`: two or more top-level values, each an object or array that starts and ends on one
 *   line, one per line (blank lines allowed);
 * - `none`: anything else (invalid syntax, scalars, several values on a line, nesting deeper than
 *   MAX_DEPTH).
 *
 * @module
 */

export type JsonShape = "json" | "ndjson" | "none";

const MAX_DEPTH = 512;

enum Expect {
  /** Between top-level values. */
  Top,
  Value,
  ValueOrArrayEnd,
  KeyOrObjectEnd,
  Key,
  Colon,
  CommaOrEnd,
}

enum Token {
  None,
  String,
  StringEscape,
  StringUnicode,
  Number,
  Literal,
}

/** Number grammar states; the `*End` ones may end the number. */
enum Num {
  Minus,
  ZeroEnd,
  IntEnd,
  Dot,
  FracEnd,
  Exp,
  ExpSign,
  ExpEnd,
}

const OBJECT = 1;
const ARRAY = 2;

const LITERALS: Record<number, Uint8Array> = {
  116: new TextEncoder().encode("true"),
  102: new TextEncoder().encode("false"),
  110: new TextEncoder().encode("null"),
};

export class JsonSequenceCheck {
  private invalid = false;
  private readonly stack = new Uint8Array(MAX_DEPTH);
  private depth = 0;
  private expect = Expect.Top;
  private token = Token.None;
  private isKey = false;
  private hexLeft = 0;
  private num = Num.Minus;
  private literal: Uint8Array | undefined;
  private literalAt = 0;
  private line = 0;
  private topValues = 0;
  private topStartLine = 0;
  private lastTopEndLine = -1;
  private allContainers = true;
  private linePerValue = true;

  /** False once the content can no longer be JSON or NDJSON: callers may stop feeding it. */
  get alive(): boolean {
    return !this.invalid;
  }

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.invalid; i++) {
      const c = bytes[i]!;
      if (this.token !== Token.None && this.continueToken(c)) continue;
      this.structural(c);
    }
  }

  finish(): JsonShape {
    if (this.token === Token.Number && this.numberMayEnd()) this.endValue();
    if (this.invalid || this.token !== Token.None || this.depth > 0 || this.topValues === 0 || !this.allContainers)
      return "none";
    if (this.topValues === 1) return "json";
    return this.linePerValue ? "ndjson" : "none";
  }

  /** Consumes `c` as part of the current token; false when `c` ended a number and is structural. */
  private continueToken(c: number): boolean {
    switch (this.token) {
      case Token.String:
        if (c === 0x22) {
          this.token = Token.None;
          if (this.isKey) this.expect = Expect.Colon;
          else this.endValue();
        } else if (c === 0x5c) {
          this.token = Token.StringEscape;
        } else if (c < 0x20) {
          this.invalid = true;
        }
        return true;
      case Token.StringEscape:
        if (c === 0x75) {
          this.token = Token.StringUnicode;
          this.hexLeft = 4;
        } else if (
          c === 0x22 ||
          c === 0x5c ||
          c === 0x2f ||
          c === 0x62 ||
          c === 0x66 ||
          c === 0x6e ||
          c === 0x72 ||
          c === 0x74
        ) {
          this.token = Token.String;
        } else {
          this.invalid = true;
        }
        return true;
      case Token.StringUnicode:
        if (!isHex(c)) this.invalid = true;
        else if (--this.hexLeft === 0) this.token = Token.String;
        return true;
      case Token.Literal:
        if (c !== this.literal![this.literalAt]) this.invalid = true;
        else if (++this.literalAt === this.literal!.length) {
          this.token = Token.None;
          this.endValue();
        }
        return true;
      case Token.Number:
        if (this.numberStep(c)) return true;
        if (!this.numberMayEnd()) {
          this.invalid = true;
          return true;
        }
        this.token = Token.None;
        this.endValue();
        return false;
      default:
        return false;
    }
  }

  private structural(c: number): void {
    if (c === 0x20 || c === 0x09 || c === 0x0d) return;
    if (c === 0x0a) {
      this.line++;
      return;
    }
    switch (this.expect) {
      case Expect.Top:
      case Expect.Value:
      case Expect.ValueOrArrayEnd:
        if (c === 0x5d && this.expect === Expect.ValueOrArrayEnd) return this.close(ARRAY);
        return this.startValue(c);
      case Expect.KeyOrObjectEnd:
        if (c === 0x7d) return this.close(OBJECT);
        return this.startKey(c);
      case Expect.Key:
        return this.startKey(c);
      case Expect.Colon:
        if (c === 0x3a) this.expect = Expect.Value;
        else this.invalid = true;
        return;
      case Expect.CommaOrEnd: {
        const container = this.stack[this.depth - 1];
        if (c === 0x2c) this.expect = container === OBJECT ? Expect.Key : Expect.Value;
        else if (c === 0x7d && container === OBJECT) this.close(OBJECT);
        else if (c === 0x5d && container === ARRAY) this.close(ARRAY);
        else this.invalid = true;
        return;
      }
    }
  }

  private startKey(c: number): void {
    if (c !== 0x22) {
      this.invalid = true;
      return;
    }
    this.token = Token.String;
    this.isKey = true;
  }

  private startValue(c: number): void {
    const container = c === 0x7b || c === 0x5b;
    if (this.depth === 0) {
      // A second value on the line where the previous one ended cannot be NDJSON.
      if (this.line === this.lastTopEndLine) this.linePerValue = false;
      this.topStartLine = this.line;
      if (!container) this.allContainers = false;
    }
    if (container) {
      if (this.depth === MAX_DEPTH) {
        this.invalid = true;
        return;
      }
      this.stack[this.depth++] = c === 0x7b ? OBJECT : ARRAY;
      this.expect = c === 0x7b ? Expect.KeyOrObjectEnd : Expect.ValueOrArrayEnd;
    } else if (c === 0x22) {
      this.token = Token.String;
      this.isKey = false;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.token = Token.Number;
      this.num = c === 0x2d ? Num.Minus : c === 0x30 ? Num.ZeroEnd : Num.IntEnd;
    } else if (LITERALS[c]) {
      this.token = Token.Literal;
      this.literal = LITERALS[c];
      this.literalAt = 1;
    } else {
      this.invalid = true;
    }
  }

  private close(container: number): void {
    if (this.stack[this.depth - 1] !== container) {
      this.invalid = true;
      return;
    }
    this.depth--;
    this.endValue();
  }

  private endValue(): void {
    if (this.depth > 0) {
      this.expect = Expect.CommaOrEnd;
      return;
    }
    this.topValues++;
    if (this.line !== this.topStartLine) this.linePerValue = false;
    this.lastTopEndLine = this.line;
    this.expect = Expect.Top;
  }

  /** Advances the number grammar; false when `c` is not part of the number. */
  private numberStep(c: number): boolean {
    const digit = c >= 0x30 && c <= 0x39;
    switch (this.num) {
      case Num.Minus:
        if (!digit) return false;
        this.num = c === 0x30 ? Num.ZeroEnd : Num.IntEnd;
        return true;
      case Num.ZeroEnd:
      case Num.IntEnd:
        if (digit && this.num === Num.IntEnd) return true;
        if (c === 0x2e) this.num = Num.Dot;
        else if (c === 0x65 || c === 0x45) this.num = Num.Exp;
        else return false;
        return true;
      case Num.Dot:
        if (!digit) return false;
        this.num = Num.FracEnd;
        return true;
      case Num.FracEnd:
        if (digit) return true;
        if (c !== 0x65 && c !== 0x45) return false;
        this.num = Num.Exp;
        return true;
      case Num.Exp:
        if (c === 0x2b || c === 0x2d) this.num = Num.ExpSign;
        else if (digit) this.num = Num.ExpEnd;
        else return false;
        return true;
      case Num.ExpSign:
        if (!digit) return false;
        this.num = Num.ExpEnd;
        return true;
      case Num.ExpEnd:
        return digit;
    }
  }

  private numberMayEnd(): boolean {
    return this.num === Num.ZeroEnd || this.num === Num.IntEnd || this.num === Num.FracEnd || this.num === Num.ExpEnd;
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}
