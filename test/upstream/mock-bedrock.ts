import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { createHash, createHmac } from "node:crypto";
import type http from "node:http";
import { mockVector, parseObject, plan, sendEvents, type Exchange, type MockRoute } from "./mock-plan.js";
import { header, MOCK_UPSTREAM_API_KEY, sendJson, type Json } from "./mock-wire.js";

/**
 * AWS Bedrock's runtime as the mock speaks it: Converse (`/bedrock/model/{modelId}/converse`),
 * ConverseStream (`…/converse-stream`, AWS event stream frames) and InvokeModel (`…/invoke`, for
 * Titan and Cohere embeddings). A request carries a Bedrock API key as a bearer token, or a SigV4
 * signature that is checked as Bedrock checks it: recomputed from the request as received (the
 * path as sent, escaped once more) with the secret of the access key id it names.
 */

/** Credentials the mock knows; the access key id extends the mock's key, so `acceptedKey` takes it. */
export const MOCK_AWS = {
  accessKeyId: `${MOCK_UPSTREAM_API_KEY}-aws`,
  secretAccessKey: "mock-aws-secret",
  region: "us-east-1",
} as const;
/** Temporary credentials: their access key id is only valid with their session token. */
export const MOCK_AWS_SESSION = {
  accessKeyId: `${MOCK_UPSTREAM_API_KEY}-aws-session`,
  secretAccessKey: "mock-aws-session-secret",
  sessionToken: "mock-aws-session-token",
  region: "us-east-1",
} as const;

const SECRETS: ReadonlyMap<string, { secretAccessKey: string; sessionToken?: string }> = new Map([
  [MOCK_AWS.accessKeyId, { secretAccessKey: MOCK_AWS.secretAccessKey }],
  [
    MOCK_AWS_SESSION.accessKeyId,
    { secretAccessKey: MOCK_AWS_SESSION.secretAccessKey, sessionToken: MOCK_AWS_SESSION.sessionToken },
  ],
]);

const PATH = /^\/bedrock\/model\/([^/]+)\/(converse|converse-stream|invoke)$/;
const EVENT_STREAM = "application/vnd.amazon.eventstream";
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Why a request was refused, for the refusal's words: a signature that does not verify, or no valid key. */
const refusals = new WeakMap<http.IncomingMessage, "signature" | "key">();

function route(operation: "converse" | "converse-stream" | "invoke", answer: (x: Exchange) => void): MockRoute {
  return {
    match(method, path) {
      const found = PATH.exec(path);
      if (method !== "POST" || !found || found[2] !== operation) return undefined;
      try {
        return { model: decodeURIComponent(found[1] ?? "") };
      } catch {
        return undefined;
      }
    },
    credential: (req, rawBody) => credential(req, rawBody),
    sendError,
    refuse(res) {
      const why = refusals.get(res.req);
      if (why === "signature")
        sendError(
          res,
          403,
          "The request signature we calculated does not match the signature you provided.",
          {},
          "InvalidSignatureException",
        );
      else
        sendError(
          res,
          403,
          "The security token included in the request is invalid.",
          {},
          "UnrecognizedClientException",
        );
    },
    answer,
  };
}

export const BEDROCK_ROUTES: MockRoute[] = [
  route("converse", converse),
  route("converse-stream", converseStream),
  route("invoke", invoke),
];

function credential(req: http.IncomingMessage, rawBody: Buffer): string | undefined {
  const authorization = req.headers.authorization ?? "";
  const bearer = /^Bearer (.*)$/.exec(authorization)?.[1];
  if (bearer !== undefined) {
    refusals.set(req, "key");
    return bearer;
  }
  const accessKeyId = verifiedKeyId(req, rawBody, authorization);
  if (accessKeyId === undefined) refusals.set(req, "signature");
  return accessKeyId;
}

/**
 * The access key id of a SigV4 `authorization` header whose signature the mock computes the
 * same, as Bedrock does: over the headers it lists, the raw path escaped once more, the body's
 * hash, at the request's `x-amz-date`, for this region and service. A route's credential check
 * is synchronous and the SDK's signer is not, so the signature is computed here by hand with
 * node:crypto: an implementation of its own, which also keeps the client's signer from being
 * checked against itself.
 */
function verifiedKeyId(req: http.IncomingMessage, rawBody: Buffer, authorization: string): string | undefined {
  const parsed =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!parsed) return undefined;
  const [, accessKeyId = "", day = "", region = "", service = "", signedHeaders = "", signature = ""] = parsed;
  const known = SECRETS.get(accessKeyId);
  const date = header(req.headers["x-amz-date"]) ?? "";
  if (!known || !date.startsWith(day) || region !== MOCK_AWS.region || service !== "bedrock") return undefined;
  const names = signedHeaders.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) return undefined;
  if (
    known.sessionToken !== undefined &&
    (header(req.headers["x-amz-security-token"]) !== known.sessionToken || !names.includes("x-amz-security-token"))
  )
    return undefined;
  const [rawPath = "", rawQuery = ""] = (req.url ?? "").split("?");
  const canonicalRequest = [
    req.method ?? "",
    rawPath.split("/").map(escapeSegment).join("/"),
    canonicalQuery(rawQuery),
    ...names.map((name) => `${name}:${(header(req.headers[name]) ?? "").trim().replace(/\s+/g, " ")}`),
    "",
    signedHeaders,
    createHash("sha256").update(rawBody).digest("hex"),
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    date,
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex"),
  ].join("\n");
  let key: Buffer = Buffer.from(`AWS4${known.secretAccessKey}`);
  for (const part of [day, region, service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  const expected = createHmac("sha256", key).update(stringToSign).digest("hex");
  return expected === signature ? accessKeyId : undefined;
}

/** SigV4's URI encoding: everything but unreserved characters, so `%3A` as sent becomes `%253A`. */
function escapeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(rawQuery: string): string {
  const pairs = [...new URLSearchParams(rawQuery)].map(
    ([name, value]) => `${escapeSegment(name)}=${escapeSegment(value)}`,
  );
  return pairs.sort().join("&");
}

function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  headers: http.OutgoingHttpHeaders = {},
  type = errorType(status),
): void {
  sendJson(
    res,
    status,
    { message },
    { "x-amzn-errortype": type, "x-amzn-requestid": "mock-request-error", ...headers },
  );
}

function errorType(status: number): string {
  const types: Record<number, string> = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
  };
  return types[status] ?? "InternalServerException";
}

// ---------------------------------------------------------------------------------------------
// Answers

const STOP_REASON = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;

/** Converse's prompt text: `system` and message text blocks, tool results' text inside. */
function converseChars(body: Json): number {
  const blocksLength = (blocks: unknown): number => {
    if (!Array.isArray(blocks)) return 0;
    let chars = 0;
    for (const block of blocks) {
      if (typeof block !== "object" || block === null) continue;
      const b = block as Json;
      if (typeof b.text === "string") chars += b.text.length;
      else if (typeof b.toolResult === "object" && b.toolResult !== null)
        chars += blocksLength((b.toolResult as Json).content);
    }
    return chars;
  };
  let chars = blocksLength(body.system);
  if (Array.isArray(body.messages))
    for (const message of body.messages)
      if (typeof message === "object" && message !== null) chars += blocksLength((message as Json).content);
  return chars;
}

/** The parts of a Converse answer that its JSON and streamed forms share. */
function converseAnswer(x: Exchange) {
  const { body, model, rule } = x;
  const config =
    typeof body.inferenceConfig === "object" && body.inferenceConfig !== null ? (body.inferenceConfig as Json) : {};
  const p = plan(body, rule, model, config.maxTokens, converseChars(body));
  const toolUse = p.toolCall
    ? { toolUseId: `tooluse_mock_${x.id}`, name: p.toolCall.name, input: parseObject(p.toolCall.arguments) }
    : undefined;
  const inputTokens = p.promptTokens - p.cacheReadTokens - p.cacheWriteTokens;
  const usage = {
    inputTokens,
    outputTokens: p.completionTokens,
    totalTokens: p.promptTokens + p.completionTokens,
    cacheReadInputTokens: p.cacheReadTokens,
    cacheWriteInputTokens: p.cacheWriteTokens,
  };
  return { p, toolUse, usage, hasText: p.words.length > 0 || !toolUse, requestId: `mock-request-${x.id}` };
}

function converse(x: Exchange): void {
  const { p, toolUse, usage, hasText, requestId } = converseAnswer(x);
  const content: Json[] = [];
  if (p.reasoningWords.length > 0)
    content.push({
      reasoningContent: { reasoningText: { text: p.reasoningWords.join(""), signature: "mock-signature" } },
    });
  if (hasText) content.push({ text: p.words.join("") });
  if (toolUse) content.push({ toolUse });
  sendJson(
    x.res,
    200,
    {
      output: { message: { role: "assistant", content } },
      stopReason: STOP_REASON[p.finish],
      usage,
      metrics: { latencyMs: 1 },
      ...x.rule?.answerFields,
    },
    { "x-amzn-requestid": requestId },
  );
}

function frame(messageType: "event" | "exception", name: string, payload: Json): Buffer {
  const nameHeader = messageType === "event" ? ":event-type" : ":exception-type";
  return Buffer.from(
    codec.encode({
      headers: {
        ":message-type": { type: "string", value: messageType },
        [nameHeader]: { type: "string", value: name },
        ":content-type": { type: "string", value: "application/json" },
      },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

/** A rule's stream error type, as the exception ConverseStream would send (throttlingException, …). */
function exceptionName(type: string): string {
  return /^[a-z][A-Za-z]*Exception$/.test(type) ? type : "internalServerException";
}

function converseStream(x: Exchange): void {
  const { p, toolUse, usage, hasText, requestId } = converseAnswer(x);
  x.res.setHeader("x-amzn-requestid", requestId);
  const event = (name: string, payload: Json) => frame("event", name, payload);
  const frames = [event("messageStart", { role: "assistant" })];
  let index = 0;
  if (p.reasoningWords.length > 0) {
    for (const word of p.reasoningWords)
      frames.push(
        event("contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { text: word } } }),
      );
    frames.push(
      event("contentBlockDelta", {
        contentBlockIndex: index,
        delta: { reasoningContent: { signature: "mock-signature" } },
      }),
    );
    frames.push(event("contentBlockStop", { contentBlockIndex: index }));
    index += 1;
  }
  if (hasText) {
    for (const word of p.words)
      frames.push(event("contentBlockDelta", { contentBlockIndex: index, delta: { text: word } }));
    frames.push(event("contentBlockStop", { contentBlockIndex: index }));
    index += 1;
  }
  if (toolUse && p.toolCall) {
    const args = p.toolCall.arguments;
    const half = Math.ceil(args.length / 2);
    frames.push(
      event("contentBlockStart", {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: toolUse.toolUseId, name: toolUse.name } },
      }),
    );
    for (const part of [args.slice(0, half), args.slice(half)])
      if (part !== "")
        frames.push(event("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: part } } }));
    frames.push(event("contentBlockStop", { contentBlockIndex: index }));
  }
  frames.push(event("messageStop", { stopReason: STOP_REASON[p.finish] }));
  frames.push(event("metadata", { usage, metrics: { latencyMs: 1 } }));
  sendEvents(x, frames, (type, message) => frame("exception", exceptionName(type), { message }), EVENT_STREAM);
}

/** InvokeModel for the embedding families the adapter serves: Titan Text Embeddings and Cohere Embed. */
function invoke(x: Exchange): void {
  const { body, model, rule, res } = x;
  if (model.includes("amazon.titan-embed-text")) {
    const text = typeof body.inputText === "string" ? body.inputText : "";
    const dimensions = typeof body.dimensions === "number" ? body.dimensions : 8;
    const tokens = rule?.usage?.prompt_tokens ?? Math.max(1, Math.ceil(text.length / 4));
    return sendJson(
      res,
      200,
      { embedding: mockVector(text, dimensions), inputTextTokenCount: tokens },
      { "x-amzn-bedrock-input-token-count": String(tokens) },
    );
  }
  if (model.includes("cohere.embed")) {
    const texts = Array.isArray(body.texts) ? body.texts.filter((t): t is string => typeof t === "string") : [];
    if (typeof body.input_type !== "string")
      return sendError(res, 400, "Malformed input request: required key [input_type] not found");
    const tokens =
      rule?.usage?.prompt_tokens ?? texts.reduce((sum, t) => sum + Math.max(1, Math.ceil(t.length / 4)), 0);
    return sendJson(
      res,
      200,
      { id: `mock-${x.id}`, response_type: "embeddings_floats", texts, embeddings: texts.map((t) => mockVector(t, 8)) },
      { "x-amzn-bedrock-input-token-count": String(tokens) },
    );
  }
  sendError(res, 400, `The provided model identifier is not an embedding model: ${model}`);
}
