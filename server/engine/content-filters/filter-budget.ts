import { ConnectError } from "@connectrpc/connect";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import type { ContentFilter } from "./content-filter.js";

/** The reason of the refusal of a call whose text is more than its filters may read. */
export const CONTENT_TOO_LARGE = "CONTENT_TOO_LARGE";

/**
 * A call's content filters, each allowed to read at most `maxBytes` bytes (UTF-8) of text for the
 * call (GATEWAY_CONTENT_FILTER_MAX_BYTES): every text it is given counts, so that is the text the
 * call sends, and its normal form where that differs (request-content.ts). Filtering runs on the
 * event loop, and each filter's cost per byte is bounded (pattern-limits.ts), so this bounds what
 * one call can take from every other. A filter that would read more refuses the call with 413,
 * whatever its action: text a redact or flag filter did not read would pass unfiltered.
 */
export function budgetedFilters(filters: readonly ContentFilter[], maxBytes: number): ContentFilter[] {
  return filters.map((filter) => {
    let read = 0;
    const charge = (text: string) => {
      read += Buffer.byteLength(text);
      if (read > maxBytes) throw tooLarge(filter, maxBytes);
    };
    return {
      ...filter,
      matches: (text) => {
        charge(text);
        return filter.matches(text);
      },
      redact: (text) => {
        charge(text);
        return filter.redact(text);
      },
    };
  });
}

function tooLarge(filter: ContentFilter, maxBytes: number): ConnectError {
  return gatewayError(
    413,
    `The text of this request is more than content filter '${filter.name}' of ` +
      `guardrail '${filter.guardrail}' reads for one call (GATEWAY_CONTENT_FILTER_MAX_BYTES: ` +
      `${maxBytes} bytes), and text it did not read cannot pass; send less text`,
    { reason: CONTENT_TOO_LARGE },
  );
}

/** Whether `err` is that refusal (a batch item's result rather than a failure of the item). */
export function isContentTooLarge(err: unknown): err is ConnectError {
  return err instanceof ConnectError && httpErrorOf(err).reason === CONTENT_TOO_LARGE;
}
