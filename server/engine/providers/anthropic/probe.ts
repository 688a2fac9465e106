import type { ChatProbe } from "../chat-api.js";
import { ANTHROPIC_VERSION } from "./chat.js";

export const anthropicProbe: ChatProbe = {
  request: (model, credential) => ({
    path: "/messages",
    headers: { "x-api-key": credential, "anthropic-version": ANTHROPIC_VERSION },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
  }),
  answers: (body) => typeof body === "object" && body !== null && "content" in body && Array.isArray(body.content),
  answerName: "an Anthropic message with a content array",
};
