/**
 * Per-provider concurrency limits of the batch runner: at most `limit` calls to one provider at
 * once from this instance; the others wait in arrival order. Also used with one fixed key as a
 * plain semaphore (submissions holding a database connection).
 */
export interface ProviderSlots {
  run<T>(provider: string, task: () => Promise<T>): Promise<T>;
  /** Waits for a slot; the function returned gives it back (once). */
  acquire(provider: string): Promise<() => void>;
}

export function createSlots(limit: number): ProviderSlots {
  const busy = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();

  async function acquire(provider: string): Promise<() => void> {
    if ((busy.get(provider) ?? 0) >= limit) {
      // The finishing call hands its slot over directly, so the count never exceeds the limit.
      await new Promise<void>((resolve) => {
        const queue = waiting.get(provider) ?? [];
        queue.push(resolve);
        waiting.set(provider, queue);
      });
    } else {
      busy.set(provider, (busy.get(provider) ?? 0) + 1);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.get(provider)?.shift();
      if (next) next();
      else busy.set(provider, (busy.get(provider) ?? 1) - 1);
    };
  }

  return {
    acquire,
    async run(provider, task) {
      const release = await acquire(provider);
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
