import type http from "node:http";
import { parseObject, plan, sendEvents, type Exchange, type MockRoute } from "./mock-plan.js";
import { mockVector } from "./mock-plan.js";
import { header, MOCK_UPSTREAM_API_KEY, sendJson, type Json } from "./mock-wire.js";

/**
 * The Gemini API's live calls (`/google/v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent`, `:batchEmbedContents`) and Vertex AI's token exchange
 * (`/google/token`). Vertex's paths differ from the Gemini API's only by their prefix, so a
 * Vertex target points its base URL at the same routes and presents a bearer token instead of
 * `x-goog-api-key`.
 *
 * Answers follow the shared plan: thoughts are `thought: true` parts, a rule's tool call is a
 * `functionCall` part (with a thought signature), a reply cut by `maxOutputTokens` finishes with
 * MAX_TOKENS, and `usageMetadata` counts thoughts apart from the candidates' tokens.
 */

const PREFIX = "/google/v1beta/models/";

/** Google's canonical status names by HTTP status, as its error bodies carry them. */
const STATUS_NAME: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

const CODE_OF_STATUS_NAME: Record<string, number> = Object.fromEntries(
  Object.entries(STATUS_NAME).map(([code, name]) => [name, Number(code)]),
);

export function geminiErrorBody(status: number, message: string): Json {
  return {
    error: {
      code: status,
      message,
      status: STATUS_NAME[status] ?? (status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION"),
    },
  };
}

function geminiRoute(method: string, answer: (x: Exchange) => void): MockRoute {
  return {
    match(requestMethod, path) {
      if (requestMethod !== "POST" || !path.startsWith(PREFIX) || !path.endsWith(`:${method}`)) return undefined;
      const model = path.slice(PREFIX.length, path.length - method.length - 1);
      return model === "" || model.includes("/") ? undefined : { model: decodeURIComponent(model) };
    },
    // The Gemini API's key header, else Vertex AI's bearer token.
    credential: (req) =>
      header(req.headers["x-goog-api-key"]) ?? /^Bearer (.*)$/.exec(req.headers.authorization ?? "")?.[1],
    sendError: (res, status, message, headers) => sendJson(res, status, geminiErrorBody(status, message), headers),
    // Names the wrong key, as some providers do, so that tests see the gateway keep it from callers.
    refuse: (res, key) =>
      sendJson(
        res,
        401,
        geminiErrorBody(
          401,
          key === undefined
            ? "Method doesn't allow unregistered callers. Please use an API key."
            : `API key not valid. Please pass a valid API key. (${key})`,
        ),
      ),
    answer,
  };
}

/** Characters of the text parts of `contents` and `systemInstruction`, from which the plan counts prompt tokens. */
function geminiPromptChars(body: Json): number {
  let chars = 0;
  const count = (content: unknown) => {
    const parts = typeof content === "object" && content !== null ? (content as Json).parts : undefined;
    if (!Array.isArray(parts)) return;
    for (const part of parts)
      if (typeof part === "object" && part !== null && typeof (part as Json).text === "string")
        chars += ((part as Json).text as string).length;
  };
  count(body.systemInstruction);
  if (Array.isArray(body.contents)) for (const content of body.contents) count(content);
  return chars;
}

const FINISH_REASON = { stop: "STOP", length: "MAX_TOKENS", tool_calls: "STOP" } as const;

/** What the JSON answer and the stream share. */
function geminiAnswer(x: Exchange) {
  const { body, model, rule } = x;
  const config =
    typeof body.generationConfig === "object" && body.generationConfig !== null ? (body.generationConfig as Json) : {};
  const p = plan(body, rule, model, config.maxOutputTokens, geminiPromptChars(body));
  const thoughts = rule?.usage ? 0 : p.reasoningWords.length;
  const usageMetadata: Json = {
    promptTokenCount: p.promptTokens,
    candidatesTokenCount: p.completionTokens - thoughts,
    totalTokenCount: p.promptTokens + p.completionTokens,
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    ...(p.cacheReadTokens > 0 ? { cachedContentTokenCount: p.cacheReadTokens } : {}),
  };
  const callPart = p.toolCall
    ? {
        functionCall: { name: p.toolCall.name, args: parseObject(p.toolCall.arguments) },
        thoughtSignature: `mock-signature-${x.id}`,
      }
    : undefined;
  const envelope = (candidate: Json, usage: Json | undefined): Json => ({
    candidates: [{ index: 0, ...candidate }],
    ...(usage ? { usageMetadata: usage } : {}),
    modelVersion: model,
    responseId: `gemini-mock-${x.id}`,
    ...rule?.answerFields,
  });
  return { p, usageMetadata, callPart, envelope, finishReason: FINISH_REASON[p.finish] };
}

function generateContent(x: Exchange): void {
  const { p, usageMetadata, callPart, envelope, finishReason } = geminiAnswer(x);
  const parts: Json[] = [];
  if (p.reasoningWords.length > 0) parts.push({ text: p.reasoningWords.join(""), thought: true });
  if (p.words.length > 0 || !callPart) parts.push({ text: p.words.join("") });
  if (callPart) parts.push(callPart);
  sendJson(x.res, 200, envelope({ content: { role: "model", parts }, finishReason }, usageMetadata));
}

/** One event per thought word and reply word, the call whole, then the finish with the counts. */
function streamGenerateContent(x: Exchange): void {
  const { p, usageMetadata, callPart, envelope, finishReason } = geminiAnswer(x);
  const running = { promptTokenCount: p.promptTokens };
  const answers: Json[] = [];
  for (const word of p.reasoningWords)
    answers.push(envelope({ content: { role: "model", parts: [{ text: word, thought: true }] } }, running));
  for (const word of p.words) answers.push(envelope({ content: { role: "model", parts: [{ text: word }] } }, running));
  if (callPart) answers.push(envelope({ content: { role: "model", parts: [callPart] } }, running));
  answers.push(envelope({ content: { role: "model", parts: [{ text: "" }] }, finishReason }, usageMetadata));
  // Without alt=sse Google streams one JSON array.
  if (!new URL(x.req.url ?? "", "http://mock").searchParams.has("alt")) return sendJson(x.res, 200, answers);
  sendEvents(
    x,
    answers.map((answer) => `data: ${JSON.stringify(answer)}\r\n\r\n`),
    (type, message) =>
      "data: " +
      JSON.stringify({
        error: {
          code: CODE_OF_STATUS_NAME[type] ?? 500,
          message,
          status: CODE_OF_STATUS_NAME[type] ? type : "INTERNAL",
        },
      }) +
      "\r\n\r\n",
  );
}

function batchEmbedContents(x: Exchange): void {
  const requests = Array.isArray(x.body.requests) ? (x.body.requests as Json[]) : [];
  const embeddings = requests.map((request) => {
    const content = typeof request.content === "object" && request.content !== null ? (request.content as Json) : {};
    const first = Array.isArray(content.parts) ? (content.parts[0] as Json | undefined) : undefined;
    const dimensions =
      typeof request.outputDimensionality === "number" && request.outputDimensionality > 0
        ? request.outputDimensionality
        : 8;
    return { values: mockVector(typeof first?.text === "string" ? first.text : "", dimensions) };
  });
  sendJson(x.res, 200, { embeddings });
}

// ---------------------------------------------------------------------------------------------
// Vertex AI's token exchange

/**
 * The OAuth token endpoint a service account's signed assertion goes to (the form body
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`). The assertion must be
 * a well-formed RS256 JWT for the cloud-platform scope, addressed to this endpoint; its signature
 * is not checked against a key, since tests generate their own. Rules apply as to any route:
 * give an API rule a `model` so that it leaves the exchange alone.
 */
const TOKEN_PATH = "/google/token";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

const tokenRoute: MockRoute = {
  match: (method, path) => (method === "POST" && path === TOKEN_PATH ? { model: "" } : undefined),
  // A valid assertion stands for the mock's key, so that the shared check lets it through.
  credential: (req, raw) => (assertionProblem(req, raw) === undefined ? MOCK_UPSTREAM_API_KEY : undefined),
  sendError: (res, status, message, headers) =>
    sendJson(
      res,
      status,
      { error: status >= 500 ? "internal_failure" : "invalid_request", error_description: message },
      headers,
    ),
  refuse: (res) =>
    sendJson(res, 400, {
      error: "invalid_grant",
      error_description: "Invalid JWT: the assertion is not a signed token for this endpoint.",
    }),
  answer: (x) =>
    sendJson(x.res, 200, {
      access_token: `${MOCK_UPSTREAM_API_KEY}-vertex-${x.id}`,
      expires_in: 3600,
      token_type: "Bearer",
    }),
};

/** Why the exchange refuses the request, or undefined when it is a well-formed assertion. */
export function assertionProblem(req: http.IncomingMessage, raw: Buffer): string | undefined {
  const form = new URLSearchParams(raw.toString("utf8"));
  if (form.get("grant_type") !== JWT_BEARER) return "grant_type is not jwt-bearer";
  const [head, claims, signature, ...rest] = (form.get("assertion") ?? "").split(".");
  if (head === undefined || claims === undefined || signature === undefined || rest.length > 0)
    return "the assertion is not a JWT";
  const header = decodeSegment(head);
  const payload = decodeSegment(claims);
  if (header?.alg !== "RS256") return "the assertion is not RS256";
  // An RSA signature is as long as the key's modulus: 2048 bits at least for a service account.
  if (!/^[A-Za-z0-9_-]+$/.test(signature) || Buffer.from(signature, "base64url").length < 256)
    return "the signature is malformed";
  if (typeof payload?.iss !== "string" || !payload.iss.includes("@")) return "iss is not a service account";
  if (typeof payload.scope !== "string" || !payload.scope.split(" ").includes(CLOUD_PLATFORM_SCOPE))
    return "scope lacks cloud-platform";
  if (payload.aud !== `http://${req.headers.host ?? ""}${TOKEN_PATH}`) return "aud is not this endpoint";
  if (typeof payload.exp !== "number" || typeof payload.iat !== "number" || payload.exp <= payload.iat)
    return "exp is not after iat";
  return undefined;
}

function decodeSegment(segment: string): Json | undefined {
  const value = parseObject(Buffer.from(segment, "base64url").toString("utf8"));
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export const GEMINI_ROUTES: MockRoute[] = [
  geminiRoute("generateContent", generateContent),
  geminiRoute("streamGenerateContent", streamGenerateContent),
  geminiRoute("batchEmbedContents", batchEmbedContents),
  tokenRoute,
];
