import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { EmbeddingsRequestJson, EmbeddingsResult } from "../chat-api.js";
import { isObject, tokenCount } from "../json-shape.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { readJsonObject } from "../upstream-http.js";
import { inBodyError } from "./errors.js";
import { modelPath, postGoogle } from "./upstream-call.js";
import { copyProviderRequestFields, EMBEDDINGS_REQUEST_FIELDS } from "../provider-fields.js";

/**
 * Embeddings through `batchEmbedContents`, one request per input. The Gemini API reports no token
 * counts for them; where the answer has none, the prompt is estimated at a token per four
 * characters of each input (rounded up), the gateway having to bill something.
 */
export async function googleEmbeddings(
  target: UpstreamTarget,
  request: EmbeddingsRequestJson,
  signal: AbortSignal,
): Promise<EmbeddingsResult> {
  const inputs = textInputs(request.input);
  const taskType = typeof request.input_type === "string" ? taskTypeOf(request.input_type) : undefined;
  const dimensions =
    typeof request.dimensions === "number" && Number.isInteger(request.dimensions) && request.dimensions > 0
      ? request.dimensions
      : undefined;
  const model = `models/${target.upstreamModelId}`;
  const requests = inputs.map((text) => {
    const one: JsonObject = { model, content: { parts: [{ text }] } };
    if (taskType) one.taskType = taskType;
    if (dimensions !== undefined) one.outputDimensionality = dimensions;
    // Fields that are not OpenAI's (`title`, …) are Gemini's, for each request.
    copyProviderRequestFields(request, one, EMBEDDINGS_REQUEST_FIELDS);
    return one;
  });
  const response = await postGoogle(
    target,
    modelPath(target.upstreamModelId, "batchEmbedContents"),
    { requests },
    "application/json",
    signal,
  );
  const body = await readJsonObject(response);
  if (isObject(body.error)) throw inBodyError(body, target.apiKey);
  const reported = isObject(body.usageMetadata) ? tokenCount(body.usageMetadata.promptTokenCount) : 0;
  const promptTokens = reported > 0 ? reported : inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return { vectors: vectorsOf(body, inputs.length), promptTokens, body };
}

/** Gemini embeds text: a string or strings, never token arrays. */
function textInputs(input: JsonValue | undefined): string[] {
  if (typeof input === "string") return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === "string"))
    return input as string[];
  throw new UpstreamError("unsupported", "Gemini embeds text only: input must be a string or an array of strings");
}

/** The `input_type` names clients send (the retrieval side of a query or document, …) as Gemini's task types. */
const TASK_TYPE_OF_INPUT_TYPE: Readonly<Record<string, string>> = {
  query: "RETRIEVAL_QUERY",
  search_query: "RETRIEVAL_QUERY",
  document: "RETRIEVAL_DOCUMENT",
  search_document: "RETRIEVAL_DOCUMENT",
  passage: "RETRIEVAL_DOCUMENT",
  classification: "CLASSIFICATION",
  clustering: "CLUSTERING",
  similarity: "SEMANTIC_SIMILARITY",
  semantic_similarity: "SEMANTIC_SIMILARITY",
  question_answering: "QUESTION_ANSWERING",
  fact_verification: "FACT_VERIFICATION",
  code_retrieval_query: "CODE_RETRIEVAL_QUERY",
};

/** A Gemini task type given by its own name passes too; anything else is not sent. */
function taskTypeOf(inputType: string): string | undefined {
  const key = inputType.toLowerCase();
  return Object.hasOwn(TASK_TYPE_OF_INPUT_TYPE, key) ? TASK_TYPE_OF_INPUT_TYPE[key] : undefined;
}

function vectorsOf(body: JsonObject, count: number): number[][] {
  const embeddings = body.embeddings;
  if (!Array.isArray(embeddings))
    throw new UpstreamError("protocol", "the upstream embeddings answer has no embeddings array");
  if (embeddings.length !== count)
    throw new UpstreamError("protocol", "the upstream returned a different number of embeddings than inputs");
  return embeddings.map((embedding) => {
    const values = isObject(embedding) ? embedding.values : undefined;
    if (!Array.isArray(values) || !values.every((value) => typeof value === "number"))
      throw new UpstreamError("protocol", "an upstream embedding is not an array of numbers");
    return values as number[];
  });
}
