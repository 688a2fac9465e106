import { isUtf8 } from "node:buffer";
import { gatewayError } from "../../../wire/errors.js";
import { ACCEPTED_TYPES_TEXT } from "./accepted-types.js";
import { CsvShapeCheck } from "./csv-shape-check.js";
import { JsonSequenceCheck } from "./json-sequence-check.js";
import { looksLikeMarkdown } from "./markdown-sniffer.js";

/**
 * Decides whether content is UTF-8 text and, if so, which kind, while it streams by in chunks and
 * without holding it: every byte is checked (valid UTF-8; no NUL or other C0 control byte except
 * tab, LF, FF, CR and ESC), the JSON and CSV shapes are checked over the whole content by streaming
 * parsers, and Markdown is recognised from the first MARKDOWN_PREFIX_BYTES. In this order:
 * 1. `application/json`: exactly one JSON object or array (whitespace around it allowed);
 * 2. `application/x-ndjson`: two or more JSON objects/arrays, one per line;
 * 3. `text/csv`: at least two records of at least two comma-separated fields, all records with the
 *    same number of fields (RFC 4180 quoting);
 * 4. `text/markdown`: in the prefix, an ATX heading (`# Title`), a fenced code block, a table
 *    delimiter row (`|---|---|`) or a setext underline, or at least two different kinds of lighter
 *    markup among list items, block quotes, links/images, `**strong**` and `` `code` ``;
 * 5. `text/plain`: any other text.
 * A leading UTF-8 byte order mark is allowed and ignored.
 */
export type TextType = "application/json" | "application/x-ndjson" | "text/csv" | "text/markdown" | "text/plain";

export const MARKDOWN_PREFIX_BYTES = 64 * 1024;

const BOM = [0xef, 0xbb, 0xbf];

export class TextClassifier {
  private readonly json = new JsonSequenceCheck();
  private readonly csv = new CsvShapeCheck();
  private readonly prefix: Uint8Array[] = [];
  private prefixBytes = 0;
  /** Bytes of an incomplete UTF-8 sequence at the end of the last chunk. */
  private carry: Uint8Array = new Uint8Array(0);
  private offset = 0;
  /** Leading bytes that matched the BOM so far; −1 once the content did not start with one. */
  private bomMatched = 0;

  /** Throws a 400 as soon as the content cannot be UTF-8 text. */
  push(chunk: Uint8Array): void {
    this.checkControls(chunk);
    this.checkUtf8(chunk);
    this.offset += chunk.length;
    const bytes = this.withoutBom(chunk);
    if (bytes.length === 0) return;
    if (this.json.alive) this.json.push(bytes);
    if (this.csv.alive) this.csv.push(bytes);
    if (this.prefixBytes < MARKDOWN_PREFIX_BYTES) {
      const take = bytes.subarray(0, MARKDOWN_PREFIX_BYTES - this.prefixBytes);
      this.prefix.push(take);
      this.prefixBytes += take.length;
    }
  }

  /** The kind of text, once the whole content has been pushed. */
  finish(): TextType {
    if (this.carry.length > 0) throw notText("it ends inside a UTF-8 character");
    const shape = this.json.finish();
    if (shape === "json") return "application/json";
    if (shape === "ndjson") return "application/x-ndjson";
    if (this.csv.isTable()) return "text/csv";
    // A prefix cut inside a character decodes without it; `stream` drops the partial tail.
    const head = new TextDecoder("utf-8").decode(Buffer.concat(this.prefix), { stream: true });
    return looksLikeMarkdown(head) ? "text/markdown" : "text/plain";
  }

  /** The structure checks skip a leading BOM, which may arrive split over chunks. */
  private withoutBom(chunk: Uint8Array): Uint8Array {
    if (this.bomMatched < 0 || this.bomMatched === BOM.length) return chunk;
    let i = 0;
    while (i < chunk.length && this.bomMatched < BOM.length && chunk[i] === BOM[this.bomMatched]) {
      i++;
      this.bomMatched++;
    }
    if (this.bomMatched === BOM.length) return chunk.subarray(i);
    if (i === chunk.length) return chunk.subarray(i);
    // Not a BOM after all: the bytes held back are content.
    const held = Buffer.from(BOM.slice(0, this.bomMatched));
    this.bomMatched = -1;
    return Buffer.concat([held, chunk.subarray(i)]);
  }

  private checkControls(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0c && c !== 0x0d && c !== 0x1b) {
        throw notText(`byte ${this.offset + i} is the control character 0x${c.toString(16).padStart(2, "0")}`);
      }
    }
  }

  private checkUtf8(bytes: Uint8Array): void {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, bytes]) : bytes;
    const complete = completeUtf8Length(data);
    if (!isUtf8(data.subarray(0, complete))) throw notText("it is not valid UTF-8");
    this.carry = data.slice(complete);
  }
}

/** The length of `data` without a trailing, still incomplete UTF-8 sequence (at most 3 bytes). */
function completeUtf8Length(data: Uint8Array): number {
  for (let i = data.length - 1; i >= Math.max(0, data.length - 3); i--) {
    const c = data[i]!;
    if (c < 0x80) return data.length;
    if (c >= 0xc0) {
      const needed = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      return i + needed > data.length ? i : data.length;
    }
  }
  return data.length;
}

function notText(why: string) {
  return gatewayError(
    400,
    "Unsupported file type: the content is neither an accepted binary format nor UTF-8 text " +
      `(${why}); accepted are ${ACCEPTED_TYPES_TEXT}`,
  );
}
