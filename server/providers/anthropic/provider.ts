import type { Provider } from "../provider.js";
import { anthropicChat } from "./chat.js";
import { anthropicFiles } from "./files.js";
import { anthropicNativeBatch } from "./native-batch.js";

/** The Anthropic API: no video generation (the configuration refuses video models on it). */
export const anthropicProvider: Provider = {
  chat: anthropicChat,
  files: anthropicFiles,
  nativeBatches: anthropicNativeBatch,
  video: undefined,
  publicBaseUrl: "https://api.anthropic.com/v1",
};
