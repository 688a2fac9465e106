import type { ChatProbe } from "../chat-api.js";
import { modelPath } from "./upstream-call.js";

export const googleProbe: ChatProbe = {
  request: (model, credential) => ({
    path: modelPath(model, "generateContent"),
    headers: { "x-goog-api-key": credential },
    body: JSON.stringify({
      contents: [{ role: "user", parts: [{ text: "ping" }] }],
      generationConfig: { maxOutputTokens: 1 },
    }),
  }),
  answers: (body) =>
    typeof body === "object" && body !== null && "candidates" in body && Array.isArray(body.candidates),
  answerName: "a Gemini answer with a candidates array",
};
