import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { ChatCompletionRequestSchema, CreateEmbeddingRequestSchema } from "../../gen/gateway/v1/inference_pb.js";
import { decodeWireJson } from "../../wire/json-input.js";
import { assertValid } from "../core/validation.js";

// TEMPORARY until the compiled validator lands.
function compileJsonValidator(schema: DescMessage): (body: JsonObject) => void {
  return (body) => assertValid(schema, decodeWireJson(schema, body));
}
export const validateChatRequest = compileJsonValidator(ChatCompletionRequestSchema);
export const validateEmbeddingRequest = compileJsonValidator(CreateEmbeddingRequestSchema);
