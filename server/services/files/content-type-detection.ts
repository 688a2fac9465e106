import { fileTypeFromBuffer } from "file-type";
import { gatewayError } from "../../../wire/errors.js";
import { ACCEPTED_BINARY, ACCEPTED_TYPES_TEXT } from "./accepted-types.js";
import { TextClassifier } from "./text-classifier.js";

/**
 * The type of an upload, from its bytes only (the file name and the declared content type play no
 * part), decided while the content streams by:
 * - the first SNIFF_BYTES are given to `file-type`; if it names an accepted binary format, that is
 *   the type and the remaining bytes are not inspected;
 * - otherwise the content must be UTF-8 text, checked over every byte and classified as the
 *   TextClassifier says; formats that are text themselves (XML, SVG, RTF, …) are text like any other;
 * - anything else is a 400 as soon as the prefix shows it, long before the upload ends.
 * Office documents are recognised from their `[Content_Types].xml`, which Office and LibreOffice
 * write as the first entry of the archive, so the prefix is enough.
 */
export const SNIFF_BYTES = 64 * 1024;

export class ContentTypeDetector {
  private readonly head: Uint8Array[] = [];
  private headBytes = 0;
  private decided = false;
  private binary: string | undefined;
  private text: TextClassifier | undefined;

  /** Throws a 400 as soon as the bytes so far rule out every accepted type. */
  async push(chunk: Uint8Array): Promise<void> {
    if (this.decided) {
      this.text?.push(chunk);
      return;
    }
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes >= SNIFF_BYTES) await this.decide();
  }

  /** The detected type, once all the content has been pushed. */
  async finish(): Promise<string> {
    if (!this.decided) await this.decide();
    return this.binary ?? this.text!.finish();
  }

  private async decide(): Promise<void> {
    this.decided = true;
    const head = Buffer.concat(this.head);
    this.head.length = 0;
    const found = await fileTypeFromBuffer(head);
    this.binary = found && ACCEPTED_BINARY[found.ext];
    if (this.binary) return;
    this.text = new TextClassifier();
    try {
      this.text.push(head);
    } catch (err) {
      // Named binary formats get their name in the answer; the text checker's reason says the rest.
      if (found)
        throw gatewayError(
          400,
          `Unsupported file type: the content is ${found.mime} (.${found.ext}); accepted are ${ACCEPTED_TYPES_TEXT}`,
        );
      throw err;
    }
  }
}
