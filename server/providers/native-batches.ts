import { anthropicNativeBatch } from "./anthropic-native-batch.js";
import type { NativeBatchApi } from "./native-batch.js";
import { openAiNativeBatch } from "./openai-native-batch.js";
import type { ProviderKind } from "./provider.js";

const NATIVE_BATCH_APIS: Record<ProviderKind, NativeBatchApi> = {
  openai: openAiNativeBatch,
  anthropic: anthropicNativeBatch,
};

/** Whether a provider's native API is used at all is its catalog setting (`native_batches`). */
export function nativeBatchApiFor(kind: ProviderKind): NativeBatchApi {
  return NATIVE_BATCH_APIS[kind];
}
