import type { Provider } from "../provider-api.js";
import { openAiProvider } from "../openai/provider.js";
import { azureChat, azureResponses } from "./chat.js";
import { azureProbe } from "./probe.js";

/** Azure OpenAI (chat.ts): chat and embeddings; its files, batches and video APIs are not wired. */
export const azureProvider: Provider = {
  chat: azureChat,
  files: undefined,
  nativeBatches: undefined,
  video: undefined,
  native: { responses: azureResponses },
  // Every Azure resource has its own host; a provider entry always names it.
  publicBaseUrl: "https://example-resource.openai.azure.com",
  chatParameters: openAiProvider.chatParameters,
  // Users name the resource's root (https://<resource>.openai.azure.com); the paths carry /openai.
  privateRootPath: "",
  probe: azureProbe,
};
