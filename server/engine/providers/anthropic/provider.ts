import type { Provider } from "../provider-api.js";
import { anthropicChat } from "./chat.js";
import { anthropicFiles } from "./files.js";
import { anthropicMessages } from "./messages.js";
import { anthropicNativeBatch } from "./native-batch.js";
import { anthropicProbe } from "./probe.js";

/** The Anthropic API: no video generation (the configuration refuses video models on it). */
export const anthropicProvider: Provider = {
  chat: anthropicChat,
  files: anthropicFiles,
  nativeBatches: anthropicNativeBatch,
  video: undefined,
  native: { messages: anthropicMessages },
  publicBaseUrl: "https://api.anthropic.com/v1",
  // What chat-request.ts carries over; the rest is dropped on the way.
  chatParameters: ["temperature", "top_p", "top_k", "max_tokens", "stop", "tools", "tool_choice", "reasoning"],
  // Users name Anthropic's host root (https://api.anthropic.com); its paths begin with /v1.
  privateRootPath: "/v1",
  probe: anthropicProbe,
};
