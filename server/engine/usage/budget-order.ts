import { gatewayError } from "../../../wire/errors.js";

/** Budget limits must strictly decrease as the interval narrows: lifetime > monthly > weekly > daily. */
const WIDTH: Record<string, number> = { daily: 0, weekly: 1, monthly: 2, lifetime: 3 };

/** Sorts budgets narrowest first: daily, weekly, monthly, lifetime. */
export function byWidth(a: { interval: string }, b: { interval: string }): number {
  return WIDTH[a.interval]! - WIDTH[b.interval]!;
}

export function assertBudgetOrder(
  interval: string,
  limitMicros: bigint,
  others: { interval: string; limitMicros: string }[],
): void {
  for (const other of others) {
    if (other.interval === interval) continue;
    const otherLimit = BigInt(other.limitMicros);
    const wider = WIDTH[interval]! > WIDTH[other.interval]!;
    if (wider ? limitMicros <= otherLimit : limitMicros >= otherLimit) {
      throw gatewayError(
        400,
        `The ${interval} budget must be ${wider ? "greater" : "less"} than the ${other.interval} ` +
          "budget (limits must decrease from lifetime to monthly, weekly and daily)",
      );
    }
  }
}
