/**
 * Converse has no embeddings; each embedding model family has its own InvokeModel body. Amazon
 * Titan Text Embeddings takes one text per call, so the inputs go as parallel calls (a few at a
 * time); Cohere Embed takes a list of texts per call. Other families are "unsupported". The
 * answer's `body` names the model only: the vectors are in `vectors`.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ChatApi } from "../chat-api.js";
import { tokenCount } from "../json-shape.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { readJsonObject } from "../upstream-http.js";
import { baseModelId, modelPath } from "./model-id.js";
import { postBedrock } from "./signing.js";
import { copyProviderRequestFields, EMBEDDINGS_REQUEST_FIELDS } from "../provider-fields.js";

const PARALLEL_CALLS = 4;
/** Cohere Embed's limit on texts per call. */
const COHERE_TEXTS_PER_CALL = 96;

export const bedrockEmbeddings: ChatApi["embeddings"] = async (target, request, signal) => {
  const inputs = textInputs(request.input);
  const model = baseModelId(target.upstreamModelId);
  if (model.startsWith("amazon.titan-embed-text")) return titanEmbeddings(target, request, inputs, signal);
  if (model.startsWith("cohere.embed")) return cohereEmbeddings(target, request, inputs, signal);
  const family = model.split(/[.-]/).slice(0, 2).join(".") || "this";
  throw new UpstreamError(
    "unsupported",
    `embeddings with the ${family} model family are not supported ` +
      "on Bedrock (Amazon Titan Text Embeddings and Cohere Embed are)",
  );
};

async function titanEmbeddings(target: UpstreamTarget, request: JsonObject, inputs: string[], signal: AbortSignal) {
  // Titan's first version takes the text alone; the second also a size and normalisation.
  const v1 = baseModelId(target.upstreamModelId).startsWith("amazon.titan-embed-text-v1");
  const answers = await bounded(inputs, async (inputText) => {
    const payload: JsonObject = v1 ? { inputText } : { inputText, normalize: true };
    if (!v1 && typeof request.dimensions === "number") payload.dimensions = request.dimensions;
    // Fields that are not OpenAI's (`embeddingTypes`, …) are the model's, for each call.
    copyProviderRequestFields(request, payload, EMBEDDINGS_REQUEST_FIELDS);
    return readJsonObject(
      await postBedrock(target, modelPath(target.upstreamModelId, "invoke"), payload, "application/json", signal),
    );
  });
  const vectors = answers.map((answer) => vectorOf(answer.embedding));
  const promptTokens = answers.reduce((sum, answer) => sum + tokenCount(answer.inputTextTokenCount), 0);
  return { vectors, promptTokens, body: { object: "list", model: target.upstreamModelId } };
}

/** Cohere wants to know what the texts are for; a document to search is the common case. */
async function cohereEmbeddings(target: UpstreamTarget, request: JsonObject, inputs: string[], signal: AbortSignal) {
  const inputType = typeof request.input_type === "string" ? request.input_type : "search_document";
  const batches: string[][] = [];
  for (let i = 0; i < inputs.length; i += COHERE_TEXTS_PER_CALL)
    batches.push(inputs.slice(i, i + COHERE_TEXTS_PER_CALL));
  const answers = await bounded(batches, async (texts) => {
    const payload: JsonObject = { texts, input_type: inputType };
    copyProviderRequestFields(request, payload, EMBEDDINGS_REQUEST_FIELDS);
    const response = await postBedrock(
      target,
      modelPath(target.upstreamModelId, "invoke"),
      payload,
      "application/json",
      signal,
    );
    // InvokeModel reports the tokens it counted in a header; Cohere's body has none.
    const tokens = tokenCount(Number(response.headers["x-amzn-bedrock-input-token-count"]));
    return { body: await readJsonObject(response), tokens };
  });
  const vectors: number[][] = [];
  answers.forEach(({ body }, i) => {
    const embeddings = Array.isArray(body.embeddings) ? body.embeddings : [];
    if (embeddings.length !== batches[i]?.length)
      throw new UpstreamError("protocol", "the upstream embeddings do not match the inputs");
    vectors.push(...embeddings.map(vectorOf));
  });
  const promptTokens = answers.reduce((sum, answer) => sum + answer.tokens, 0);
  return { vectors, promptTokens, body: { object: "list", model: target.upstreamModelId } };
}

function textInputs(input: JsonValue | undefined): string[] {
  if (typeof input === "string") return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === "string"))
    return input as string[];
  throw new UpstreamError("unsupported", "Bedrock embeddings take text inputs only (a string or an array of strings)");
}

function vectorOf(value: JsonValue | undefined): number[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === "number"))
    throw new UpstreamError("protocol", "an upstream embedding is not an array of numbers");
  return value as number[];
}

/** `run` over every item, at most PARALLEL_CALLS at once, results in input order; the first failure fails all. */
async function bounded<T, R>(items: T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        results[index] = await run(items[index] as T);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_CALLS, items.length) }, worker));
  return results;
}
