import type { ServerResponse } from "node:http";
import { SSE_KEEPALIVE } from "../wire/sse-frames.js";

/** One open event stream: when it last wrote anything. */
export interface KeepaliveEntry {
  readonly res: ServerResponse;
  lastWriteAt: number;
}

/**
 * One timer for every open event stream of a facade, instead of a timer per stream re-armed on
 * every frame: with thousands of streams open, per-stream timers cost a timer object each and a
 * clear and a re-arm per frame. The ticker looks at every stream each quarter of the interval and
 * writes `: keepalive` to those silent for the whole interval, so a silent stream hears one
 * between 1× and 1.25× the interval after its last output. The timer runs only while a stream is
 * open and never holds the process up.
 */
export class KeepaliveTicker {
  private readonly streams = new Set<KeepaliveEntry>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly intervalMs: number) {}

  /** A stream whose head has just been written. */
  add(res: ServerResponse): KeepaliveEntry {
    const entry = { res, lastWriteAt: performance.now() };
    this.streams.add(entry);
    if (!this.timer) {
      this.timer = setInterval(() => this.tick(), Math.max(1, Math.floor(this.intervalMs / 4)));
      this.timer.unref();
    }
    return entry;
  }

  remove(entry: KeepaliveEntry): void {
    this.streams.delete(entry);
    if (this.streams.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Streams being kept alive now. */
  get size(): number {
    return this.streams.size;
  }

  private tick(): void {
    const now = performance.now();
    for (const entry of this.streams) {
      if (now - entry.lastWriteAt < this.intervalMs || entry.res.destroyed) continue;
      entry.res.write(SSE_KEEPALIVE);
      entry.lastWriteAt = now;
    }
  }
}
