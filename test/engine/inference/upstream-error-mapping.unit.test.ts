import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { UpstreamError, type UpstreamFailure } from "../../../server/engine/providers/provider.js";
import { isRetryable, toGatewayError } from "../../../server/engine/inference/upstream-errors.js";
import { httpErrorOf } from "../../../wire/errors.js";

/**
 * What a caller learns of each way a provider can fail, and whether the call may move on to the
 * next endpoint, as one table (the one documented on upstream-errors.ts), without a gateway.
 */
const test = suite("inference: upstream error mapping");

interface Row {
  failure: UpstreamFailure;
  status?: number;
  retryAfterS?: number;
  /** What the caller gets. */
  http: number;
  reason?: string;
  fallback: boolean;
  /** A part of the message. */
  says: string;
}

const TABLE: Row[] = [
  { failure: "status", status: 400, http: 400, fallback: false, says: "rejected the request" },
  { failure: "status", status: 404, http: 400, fallback: false, says: "rejected the request" },
  { failure: "status", status: 422, http: 400, fallback: false, says: "rejected the request" },
  { failure: "status", status: 413, http: 413, fallback: false, says: "too large" },
  {
    failure: "status",
    status: 401,
    http: 502,
    fallback: true,
    says: "refused the gateway's credentials (upstream status 401)",
  },
  { failure: "status", status: 402, http: 502, fallback: true, says: "(upstream status 402)" },
  { failure: "status", status: 403, http: 502, fallback: true, says: "(upstream status 403)" },
  { failure: "status", status: 408, http: 429, fallback: true, says: "rate limiting" },
  { failure: "status", status: 429, retryAfterS: 7, http: 429, fallback: true, says: "rate limiting" },
  { failure: "status", status: 500, http: 502, fallback: true, says: "(upstream status 500)" },
  { failure: "status", status: 503, http: 503, fallback: true, says: "temporarily unavailable" },
  { failure: "status", status: 529, http: 529, fallback: true, says: "overloaded" },
  { failure: "timeout", http: 524, fallback: true, says: "did not answer in time" },
  { failure: "connect", http: 502, fallback: true, says: "could not be reached" },
  { failure: "protocol", http: 502, fallback: true, says: "invalid response" },
  { failure: "cut", http: 502, reason: "stream_severed", fallback: false, says: "ended the stream" },
  { failure: "unsupported", http: 400, fallback: false, says: "does not support this request" },
  { failure: "aborted", http: 499, fallback: false, says: "cancelled by the client" },
];

for (const row of TABLE) {
  test(
    `${row.failure}${row.status ? ` ${row.status}` : ""} → ` +
      `${row.http}${row.fallback ? ", next endpoint" : ", no fallback"}`,
    () => {
      const upstream = new UpstreamError(row.failure, "detail from upstream", {
        status: row.status,
        retryAfterS: row.retryAfterS,
      });
      assert.is(isRetryable(upstream), row.fallback);
      const mapped = toGatewayError(upstream, "Acme");
      const error = httpErrorOf(mapped);
      assert.is(error.status, row.http);
      assert.match(error.message, row.says);
      assert.is(error.reason, row.reason);
      assert.is(
        mapped.metadata.get("retry-after") ?? undefined,
        row.retryAfterS === undefined ? undefined : String(row.retryAfterS),
      );
    },
  );
}

test("every message names the provider", () => {
  for (const row of TABLE.filter((r) => r.failure !== "aborted")) {
    const error = httpErrorOf(toGatewayError(new UpstreamError(row.failure, "x", { status: row.status }), "Acme"));
    assert.match(error.message, "Acme", `${row.failure} ${row.status ?? ""}`);
  }
});

test.run();
