import type { ProviderKind } from "../../engine/providers/provider-kind.js";
import { providerFor } from "../../engine/index.js";
import { upstreamUrl } from "../../platform/outbound/base-url.js";

/**
 * The smallest real request each wire format accepts (one token of output), and the shape its
 * success answer must have: each provider kind's probe (server/engine/providers/<kind>/probe.ts), sent
 * to a private endpoint's root. Used by validation to prove the endpoint serves the model.
 */
export interface TestCall {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

export function testCall(kind: ProviderKind, baseUrl: string, model: string, credential: string): TestCall {
  const provider = providerFor(kind);
  const { path, headers, body } = provider.probe.request(model, credential);
  const common = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": "model-gateway-validation",
  };
  return { url: upstreamUrl(baseUrl, provider.privateRootPath + path), headers: { ...common, ...headers }, body };
}

export function hasExpectedShape(kind: ProviderKind, body: unknown): boolean {
  return providerFor(kind).probe.answers(body);
}

export function expectedShapeName(kind: ProviderKind): string {
  return providerFor(kind).probe.answerName;
}
