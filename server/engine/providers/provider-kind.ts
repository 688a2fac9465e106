/**
 * The provider kinds, one per folder here. The registry (registry.ts) has one line per kind and
 * fails to compile when its table and this list disagree. The name lives apart from the registry,
 * which imports every adapter, so that an adapter naming a kind imports no other adapter.
 */
export type ProviderKind = "openai" | "anthropic" | "azure" | "bedrock" | "google";
