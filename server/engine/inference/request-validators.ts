import { ChatCompletionRequestSchema, CreateEmbeddingRequestSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { compileJsonValidator } from "../../platform/rpc/json-validator.js";

/**
 * The checks of the JSON-native inference bodies, compiled once at start-up from the typed request
 * messages and their `(gateway.v1.rules)`: the 400s a typed request gets from the validation
 * interceptor, naming the same fields, without building the message (server/platform/rpc/json-validator.ts).
 * Each also normalizes the body it passes (lowerCamel names of known fields, `null` as not set).
 */
export const validateChatRequest = compileJsonValidator(ChatCompletionRequestSchema);
export const validateEmbeddingRequest = compileJsonValidator(CreateEmbeddingRequestSchema);
