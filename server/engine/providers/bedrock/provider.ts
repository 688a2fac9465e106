import type { Provider } from "../provider-api.js";
import { bedrockChat } from "./chat.js";
import { bedrockProbe } from "./probe.js";

/** AWS Bedrock's runtime (Converse, and InvokeModel for embeddings): no files, native batches or video. */
export const bedrockProvider: Provider = {
  chat: bedrockChat,
  files: undefined,
  nativeBatches: undefined,
  video: undefined,
  native: {},
  // A region's endpoint; a provider entry names its own region's.
  publicBaseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com",
  // What converse-request.ts carries over; the rest is dropped on the way.
  chatParameters: ["temperature", "top_p", "top_k", "max_tokens", "stop", "tools", "tool_choice"],
  privateRootPath: "",
  probe: bedrockProbe,
};
