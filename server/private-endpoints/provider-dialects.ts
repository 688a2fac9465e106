import type { ByokProviderKind } from "../byok/byok-providers.js";
import { upstreamUrl } from "./base-url.js";

/**
 * The smallest real request each wire format accepts (one token of output), and the shape its
 * success answer must have. Used by validation to prove the endpoint serves the model.
 */
export interface TestCall {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

export function testCall(kind: ByokProviderKind, baseUrl: string, model: string, credential: string): TestCall {
  const messages = [{ role: "user", content: "ping" }];
  const common = { "content-type": "application/json", accept: "application/json", "user-agent": "model-gateway-validation" };
  switch (kind) {
    case "openai":
      return {
        url: upstreamUrl(baseUrl, "/chat/completions"),
        headers: { ...common, authorization: `Bearer ${credential}` },
        body: JSON.stringify({ model, messages, max_tokens: 1 }),
      };
    case "anthropic":
      return {
        url: upstreamUrl(baseUrl, "/v1/messages"),
        headers: { ...common, "x-api-key": credential, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model, messages, max_tokens: 1 }),
      };
  }
}

/** Whether a 2xx body is what the format answers: a `choices` array (OpenAI) or a `content` array (Anthropic). */
export function hasExpectedShape(kind: ByokProviderKind, body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const field = kind === "openai" ? "choices" : "content";
  return Array.isArray((body as Record<string, unknown>)[field]);
}

export function expectedShapeName(kind: ByokProviderKind): string {
  return kind === "openai" ? "an OpenAI chat completion with a choices array" : "an Anthropic message with a content array";
}
