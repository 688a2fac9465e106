/**
 * Per-provider concurrency limits of the batch engine: at most `limit` calls to one provider at
 * once from this instance; the others wait in arrival order.
 */
export interface ProviderSlots {
  run<T>(provider: string, task: () => Promise<T>): Promise<T>;
}

export function createSlots(limit: number): ProviderSlots {
  const busy = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  return {
    async run(provider, task) {
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
      try {
        return await task();
      } finally {
        const next = waiting.get(provider)?.shift();
        if (next) next();
        else busy.set(provider, (busy.get(provider) ?? 1) - 1);
      }
    },
  };
}
