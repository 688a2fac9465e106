/**
 * A streaming check that the whole content is a comma-separated table (RFC 4180), in constant
 * memory: records end with LF or CRLF; a field is either plain (no `"`) or quoted from its first
 * character (`""` escapes a quote; commas and line breaks may occur inside); every record has the
 * same number of fields. It is a table when that holds with at least two records of at least two
 * fields. Blank lines are allowed only at the end.
 *
 * @module
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

export class CsvShapeCheck {
  private invalid = false;
  private inQuotes = false;
  /** Just after a quote inside a quoted field: the field ends here, or the quote was escaped. */
  private afterQuote = false;
  private atFieldStart = true;
  private fields = 1;
  private recordEmpty = true;
  private expected = 0;
  private records = 0;
  private sawBlankLine = false;

  get alive(): boolean {
    return !this.invalid;
  }

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.invalid; i++) {
      const c = bytes[i]!;
      if (this.inQuotes) {
        if (c === QUOTE) {
          this.inQuotes = false;
          this.afterQuote = true;
        }
        continue;
      }
      if (this.afterQuote) {
        this.afterQuote = false;
        if (c === QUOTE) {
          this.inQuotes = true;
          continue;
        }
        if (c !== COMMA && c !== LF && c !== CR) {
          this.invalid = true;
          continue;
        }
      }
      if (c === COMMA) {
        this.fields++;
        this.recordEmpty = false;
        this.atFieldStart = true;
      } else if (c === LF) {
        this.endRecord();
      } else if (c === QUOTE) {
        if (!this.atFieldStart) this.invalid = true;
        this.inQuotes = true;
        this.atFieldStart = false;
        this.recordEmpty = false;
      } else if (c !== CR) {
        this.atFieldStart = false;
        this.recordEmpty = false;
      }
    }
  }

  isTable(): boolean {
    if (this.inQuotes) return false;
    if (!this.recordEmpty) this.endRecord();
    return !this.invalid && this.records >= 2 && this.expected >= 2;
  }

  private endRecord(): void {
    if (this.recordEmpty) {
      this.sawBlankLine = true;
    } else if (this.sawBlankLine) {
      this.invalid = true;
    } else {
      this.records++;
      if (this.expected === 0) this.expected = this.fields;
      else if (this.fields !== this.expected) this.invalid = true;
    }
    this.fields = 1;
    this.recordEmpty = true;
    this.atFieldStart = true;
  }
}
