import type { ChatProbe } from "../chat-api.js";
import { openAiProbe } from "../openai/probe.js";

/** Azure's v1 surface, which takes the deployment as `model`: validation needs no API version. */
export const azureProbe: ChatProbe = {
  request: (model, credential) => ({
    path: "/openai/v1/chat/completions",
    headers: { "api-key": credential },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
  }),
  answers: openAiProbe.answers,
  answerName: openAiProbe.answerName,
};
