import type { ChatProbe } from "../chat-api.js";
import { modelPath } from "./model-id.js";

/** A Bedrock API key as a bearer token: validation of a private endpoint has no AWS credentials to sign with. */
export const bedrockProbe: ChatProbe = {
  request: (model, credential) => ({
    path: modelPath(model, "converse"),
    headers: { authorization: `Bearer ${credential}` },
    body: JSON.stringify({
      messages: [{ role: "user", content: [{ text: "ping" }] }],
      inferenceConfig: { maxTokens: 1 },
    }),
  }),
  answers: (body) =>
    typeof body === "object" &&
    body !== null &&
    "output" in body &&
    typeof body.output === "object" &&
    body.output !== null &&
    "message" in body.output,
  answerName: "a Bedrock Converse answer with output.message",
};
