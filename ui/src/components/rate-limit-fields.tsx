import { count } from "../format.js";
import { numberOrNull } from "../form-fields.js";
import type { SvcRateLimit } from "../types.js";

/**
 * The requests and tokens per minute of a key or a workspace (`svc_rate_limit`,
 * docs/api/limits.md) in a form: two fields, each empty for no such limit. The API takes both at
 * once (a write replaces the pair), so the form always sends both: null when both are empty.
 */
export function RateLimitFields({ value, idPrefix }: { value?: SvcRateLimit | null; idPrefix: string }) {
  return (
    <>
      <label>
        Requests per minute (empty for none)
        <input
          name="requests_per_minute"
          type="number"
          min="1"
          step="1"
          inputMode="numeric"
          aria-describedby={`${idPrefix}-rate-hint`}
          defaultValue={value?.requests_per_minute == null ? "" : String(value.requests_per_minute)}
        />
      </label>
      <label>
        Tokens per minute (empty for none)
        <input
          name="tokens_per_minute"
          type="number"
          min="1"
          step="1"
          inputMode="numeric"
          aria-describedby={`${idPrefix}-rate-hint`}
          defaultValue={value?.tokens_per_minute == null ? "" : String(value.tokens_per_minute)}
        />
      </label>
      <p id={`${idPrefix}-rate-hint`} class="hint">
        Past either limit, calls get 429 until the minute ends; a call counts its prompt and <code>max_tokens</code>{" "}
        until the answer says what it used.
      </p>
    </>
  );
}

/** The form's limits as the API takes them: null when neither field is filled. */
export function rateLimitOf(fields: FormData): SvcRateLimit | null {
  const requests = numberOrNull(fields, "requests_per_minute");
  const tokens = numberOrNull(fields, "tokens_per_minute");
  return requests === null && tokens === null ? null : { requests_per_minute: requests, tokens_per_minute: tokens };
}

/** The limits in a table cell or a list of defaults; empty when there are none. */
export function rateLimitText(value: SvcRateLimit | null | undefined): string {
  const parts = [
    value?.requests_per_minute == null ? "" : `${count(value.requests_per_minute)} requests/min`,
    value?.tokens_per_minute == null ? "" : `${count(value.tokens_per_minute)} tokens/min`,
  ].filter(Boolean);
  return parts.join(", ");
}
