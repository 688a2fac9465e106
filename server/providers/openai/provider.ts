import type { Provider } from "../provider.js";
import { openAiChat } from "./chat.js";
import { openAiFiles } from "./files.js";
import { openAiNativeBatch } from "./native-batch.js";
import { openAiVideo } from "./video.js";

/** OpenAI and the providers that copy its API: every part. */
export const openAiProvider: Provider = {
  chat: openAiChat,
  files: openAiFiles,
  nativeBatches: openAiNativeBatch,
  video: openAiVideo,
  publicBaseUrl: "https://api.openai.com/v1",
};
