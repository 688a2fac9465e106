import { Code, ConnectError } from "@connectrpc/connect";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { gatewayError, httpErrorOf, withMetadata } from "../../wire/errors.js";

/**
 * The one error helper (wire/errors.ts): refusals carry no stack (capturing one was the largest
 * cost of a refused request), faults keep theirs, and a copy with other metadata keeps the
 * original's stack, details and cause without capturing one of its own.
 */
const test = suite("wire: errors");

/** The frames of a stack ("    at …" lines); the first line is the message. */
const frames = (error: Error) => (error.stack ?? "").split("\n").filter((line) => line.trimStart().startsWith("at "));

test("a refusal (4xx) has no stack frames; a fault (5xx) has them; the limit is restored", () => {
  const limit = Error.stackTraceLimit;
  for (const status of [400, 401, 402, 404, 429]) {
    const error = gatewayError(status, "refused");
    assert.equal(frames(error), [], `status ${status}`);
    assert.is(httpErrorOf(error).status, status);
  }
  assert.ok(frames(gatewayError(502, "upstream failed")).length > 0);
  assert.is(Error.stackTraceLimit, limit);
  assert.ok(frames(new Error("plain")).length > 0, "other errors keep their stacks");
});

test("withMetadata copies code, message, details, cause and stack, and leaves the original alone", () => {
  const cause = new Error("root");
  const original = gatewayError(503, "down", {
    reason: "maintenance",
    retryable: true,
    cause,
    headers: { "retry-after": "5" },
  });
  const copy = withMetadata(original, new Headers({ "x-request-id": "r-1" }));
  assert.ok(copy instanceof ConnectError);
  assert.is(copy.code, Code.Unavailable);
  assert.is(copy.rawMessage, "down");
  assert.is(copy.cause, cause);
  assert.is(copy.stack, original.stack);
  assert.equal(httpErrorOf(copy), httpErrorOf(original));
  assert.is(copy.metadata.get("x-request-id"), "r-1");
  assert.is(original.metadata.get("x-request-id"), null);
  assert.is(original.metadata.get("retry-after"), "5");
});

test.run();
