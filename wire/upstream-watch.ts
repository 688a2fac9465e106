import { createContextKey } from "@connectrpc/connect";

/**
 * How long one exchange has been waiting on providers, and whether the gateway cut a provider's
 * call short: written by the inference call (server/engine/inference/inference-call.ts), read by
 * whichever door observes the exchange (the REST facade, the core's observing interceptor) when it
 * writes the access line, the metrics and the span.
 *
 * Why not the `x-gateway-upstream-ms` response header alone: a call its client abandoned never
 * gets its response headers to the door (the answer is never made), so the access line of a
 * cancelled call said `upstreamMs: 0` and could not tell that a provider was still working. The
 * watch is a live object, so the door reads the time up to the moment it records the exchange.
 */
export class UpstreamWatch {
  private spentMs = 0;
  /** When the provider call in progress began; undefined while none is. */
  private openedAt: number | undefined;
  private cut = false;

  /** A provider call begins (an attempt of the inference call). */
  opened(): void {
    this.openedAt ??= performance.now();
  }

  /** The provider call ended by itself: it answered (a stream: its last chunk), or failed. */
  closed(): void {
    if (this.openedAt === undefined) return;
    this.spentMs += performance.now() - this.openedAt;
    this.openedAt = undefined;
  }

  /**
   * The inference call was aborted (its client left, its deadline passed, the gateway stops): a
   * provider call still in progress is cancelled. Listens on the call's signal (an object
   * listener: no closure per call).
   */
  handleEvent(): void {
    if (this.openedAt === undefined) return;
    this.closed();
    this.cut = true;
  }

  /** True once a provider call has begun: the door then reads the provider's time here. */
  get used(): boolean {
    return this.cut || this.spentMs > 0 || this.openedAt !== undefined;
  }

  /**
   * What the exchange's record says, read when the door records it. A call still in progress counts
   * up to now; when the client `abandoned` the exchange, a call still in progress is the one its
   * departure cancels (the door may hear of the departure before the inference call does).
   */
  reading(abandoned: boolean): { upstreamMs: number; upstreamCancelled: boolean } {
    const open = this.openedAt === undefined ? 0 : performance.now() - this.openedAt;
    return {
      upstreamMs: this.spentMs + open,
      upstreamCancelled: this.cut || (abandoned && this.openedAt !== undefined),
    };
  }
}

/**
 * Where a door hands the exchange's watch to the handler: set by the core's observing interceptor
 * for calls over the network, and passed by the facade through the direct transport (the one value
 * it carries into the core's fresh context values). Absent for work no door observes (batch items).
 */
export const upstreamWatchKey = createContextKey<UpstreamWatch | undefined>(undefined, {
  description: "the exchange's upstream watch",
});
