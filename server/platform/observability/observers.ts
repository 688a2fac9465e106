import type { ExchangeObserver } from "../../../wire/exchange.js";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * Several exchange observers as one (the access log, the REST spans, the metrics …), for the
 * facade and the core's interceptor, which each take one. Absent ones are skipped. An observer
 * that throws is logged and the others still run: a bug in one must not fail the request it
 * reports, nor, since observers run after the answer, surface as an unhandled rejection.
 */
export function composeObservers(log: Logger, ...observers: Array<ExchangeObserver | undefined>): ExchangeObserver {
  const present = observers.filter((observer): observer is ExchangeObserver => observer !== undefined);
  return (exchange) => {
    for (const observe of present) {
      try {
        observe(exchange);
      } catch (err) {
        log.error({ err: errorMessage(err), requestId: exchange.requestId }, "an exchange observer failed");
      }
    }
  };
}
