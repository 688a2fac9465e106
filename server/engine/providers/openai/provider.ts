import type { Provider } from "../provider-api.js";
import { OPENAI_ROUTE, openAiChat } from "./chat.js";
import { openAiFiles } from "./files.js";
import { openAiNativeBatch } from "./native-batch.js";
import { openAiProbe } from "./probe.js";
import { isOpenAiHost, openAiCompatibleResponses } from "./responses.js";
import { openAiVideo } from "./video.js";

/** OpenAI and the providers that copy its API: every part. */
export const openAiProvider: Provider = {
  chat: openAiChat,
  files: openAiFiles,
  nativeBatches: openAiNativeBatch,
  video: openAiVideo,
  // OpenAI's own host speaks Responses; another OpenAI-compatible host does when its entry says so (responses_api).
  native: { responses: openAiCompatibleResponses(OPENAI_ROUTE, isOpenAiHost) },
  publicBaseUrl: "https://api.openai.com/v1",
  chatParameters: [
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "response_format",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
  ],
  privateRootPath: "",
  probe: openAiProbe,
};
