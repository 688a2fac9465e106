/**
 * The request parameters an endpoint accepts when the config does not list them: what each wire
 * format's API documents (chat: the provider kind's, in server/engine/providers/<kind>/provider.ts).
 * Routing with `require_parameters` and the models list read these.
 *
 * @module
 */
import type { ProviderKind } from "../providers/provider.js";
import { providerFor } from "../providers/registry.js";

const EMBEDDINGS_PARAMETERS: readonly string[] = ["dimensions", "input_type", "encoding_format"];

export function defaultSupportedParameters(kind: ProviderKind, outputModalities: readonly string[]): string[] {
  return [...(outputModalities.includes("embeddings") ? EMBEDDINGS_PARAMETERS : providerFor(kind).chatParameters)];
}
