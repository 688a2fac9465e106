import * as assert from "uvu/assert";
import type { MockRule } from "../upstream/mock-upstream.js";
import { at, call, type Reply } from "./http.js";
import type { InferenceGateway } from "./inference-gateway.js";

/**
 * POST /api/alpha/decisions against the inference test gateway (mock/chat unless the body says
 * otherwise); `null` sends no key.
 */
export function decide(
  env: InferenceGateway,
  body: Record<string, unknown>,
  key: string | null = env.gw.key,
): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/alpha/decisions", {
    key: key ?? undefined,
    body: { model: "mock/chat", state: { ticket: "I was charged twice" }, ...body },
  });
}

/**
 * A mock rule whose first answer token has exactly these alternatives: token → probability (the
 * mock serves ln(p) as the logprob). The most probable token is the one produced.
 */
export function logprobsRule(probabilities: Record<string, number>, rule: MockRule = {}): MockRule {
  const top = Object.entries(probabilities).map(([token, p]) => ({ token, logprob: Math.log(p) }));
  const best = top.reduce((a, b) => (b.logprob > a.logprob ? b : a));
  return {
    ...rule,
    reply: best.token.trim() || best.token,
    logprobs: [{ token: best.token, logprob: best.logprob, top_logprobs: top }],
  };
}

export const NOUL = {
  type: "noul",
  instructions: "Is the customer asking for a refund?",
  criteria: { true: "asks for money back", false: "does not" },
};
export const CHOICE = {
  type: "choice",
  instructions: "Which team should handle this?",
  criteria: { billing: "Payments and refunds", support: "Technical problems", sales: "New purchases" },
};
export const SCORE = {
  type: "score",
  instructions: "How severe is the issue?",
  criteria: ["Cosmetic", "Workaround exists", "Blocking"],
};

/** Equal up to floating-point rounding: the expected values are exact fractions. */
export function assertClose(actual: unknown, expected: number, what = "value"): void {
  assert.type(actual, "number", what);
  assert.ok(Math.abs((actual as number) - expected) < 1e-12, `${what}: expected ${expected}, got ${String(actual)}`);
}

export function assertError(res: Reply, status: number, message?: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status, res.text);
  if (message) assert.match(String(at(res.body, "error", "message")), message);
}
