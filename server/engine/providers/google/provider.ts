import type { Provider } from "../provider-api.js";
import { googleChat } from "./chat.js";
import { googleProbe } from "./probe.js";

/** Google's Gemini API, and Vertex AI with a service account (README.md): chat and embeddings only. */
export const googleProvider: Provider = {
  chat: googleChat,
  files: undefined,
  nativeBatches: undefined,
  video: undefined,
  native: {},
  publicBaseUrl: "https://generativelanguage.googleapis.com/v1beta",
  // What chat-request.ts carries over; the rest is dropped on the way.
  chatParameters: [
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "tools",
    "tool_choice",
    "reasoning",
  ],
  // Users name the API's host (https://generativelanguage.googleapis.com); its paths begin with /v1beta.
  privateRootPath: "/v1beta",
  probe: googleProbe,
};
