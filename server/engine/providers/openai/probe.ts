import type { ChatProbe } from "../chat-api.js";

export const openAiProbe: ChatProbe = {
  request: (model, credential) => ({
    path: "/chat/completions",
    headers: { authorization: `Bearer ${credential}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "ping" }], max_tokens: 1 }),
  }),
  answers: (body) => typeof body === "object" && body !== null && "choices" in body && Array.isArray(body.choices),
  answerName: "an OpenAI chat completion with a choices array",
};
