import * as assert from "uvu/assert";
import type { MockUpstream } from "../upstream/mock-upstream.js";
import { eventually } from "./eventually.js";

/**
 * A chat completion whose client goes away once the call has reached the mock upstream, where the
 * gateway has something to cancel. Resolves with what the client saw ("aborted" unless the answer
 * came first).
 */
export async function abandonOnceUpstream(
  upstream: MockUpstream,
  base: string,
  key: string,
  body: Record<string, unknown>,
): Promise<"answered" | "aborted"> {
  const seen = upstream.requests.length;
  const controller = new AbortController();
  const pending = fetch(`${base}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal,
  }).then(
    () => "answered" as const,
    () => "aborted" as const,
  );
  await eventually(() => upstream.requests.length, "the call reached the upstream", { until: (now) => now > seen });
  assert.is(upstream.requests.length, seen + 1, "only this call reached the upstream");
  controller.abort();
  return pending;
}
