/**
 * Splits a byte stream into lines at "\n", holding at most one line of at most `maxBytes`. Each
 * chunk is searched once; its complete lines are decoded at once, while the bytes of a line still
 * open are kept as they came and decoded once, when its "\n" arrives. A line that outgrows
 * `maxBytes` throws `tooLong()` before anything more is held, so an endless line is neither kept
 * past the limit nor searched twice (nor decoded at all).
 *
 * A UTF-8 byte 0x0A is always "\n" and never part of another character, so bytes can be cut at it.
 * One streaming decoder sees every byte in order, so the text is what decoding the whole stream at
 * once gives: a leading byte order mark dropped, a broken sequence replaced where it breaks.
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder();
  private readonly pieces: Uint8Array[] = [];
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly tooLong: () => Error,
  ) {}

  /** The lines `chunk` completes, without their "\n" (a "\r" before it is the caller's to drop). */
  push(chunk: Uint8Array): string[] {
    if (chunk.length <= this.maxBytes) return this.split(chunk);
    // A line inside a chunk is measured by the chunk's size; a larger chunk goes in parts.
    const lines: string[] = [];
    for (let from = 0; from < chunk.length; from += this.maxBytes) {
      for (const line of this.split(chunk.subarray(from, from + this.maxBytes))) lines.push(line);
    }
    return lines;
  }

  /** What followed the last "\n" once the stream has ended, if anything did. */
  end(): string | undefined {
    return this.held === 0 ? undefined : this.decoder.decode(this.takeHeld());
  }

  /** `push` for a chunk of at most `maxBytes`, so only a line begun before it can be too long. */
  private split(chunk: Uint8Array): string[] {
    if (chunk.length === 0) return [];
    // Streamed events usually come one per chunk, ending it.
    const last = chunk[chunk.length - 1] === 10 ? chunk.length - 1 : chunk.lastIndexOf(10);
    if (last === -1) {
      this.hold(chunk);
      return [];
    }
    // The open line is decoded before the chunk: the decoder must see the bytes in order.
    let head = "";
    if (this.held > 0) {
      if (this.held + chunk.indexOf(10) > this.maxBytes) throw this.overflow();
      head = this.decoder.decode(this.takeHeld(), { stream: true });
    }
    const text = this.decoder.decode(last + 1 === chunk.length ? chunk : chunk.subarray(0, last + 1), { stream: true });
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      lines.push(text.slice(start, end));
      start = end + 1;
    }
    if (head !== "") lines[0] = head + lines[0]!;
    if (last + 1 < chunk.length) this.hold(chunk.subarray(last + 1));
    return lines;
  }

  private hold(piece: Uint8Array): void {
    if (this.held + piece.length > this.maxBytes) throw this.overflow();
    this.pieces.push(piece);
    this.held += piece.length;
  }

  private takeHeld(): Uint8Array {
    const bytes = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.held);
    this.pieces.length = 0;
    this.held = 0;
    return bytes;
  }

  private overflow(): Error {
    this.pieces.length = 0;
    this.held = 0;
    return this.tooLong();
  }
}
