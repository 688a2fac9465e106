import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { handleBatchRoute, MockBatchStore, type MockBatches } from "./mock-batches.js";
import { BEDROCK_ROUTES } from "./mock-bedrock.js";
import { MockScripts } from "./mock-script.js";
import { handleFileRoute, MockFileStore, type MockFiles } from "./mock-files.js";
import { GEMINI_ROUTES } from "./mock-gemini.js";
import { MockVideoStore, type MockVideos } from "./mock-videos.js";
import {
  acceptedKey,
  flatHeaders,
  header,
  refuseKey,
  MOCK_UPSTREAM_API_KEY,
  sendError,
  sendJson,
  type Json,
  type Provider,
} from "./mock-wire.js";
import { mockVector, type Exchange, type MockRoute, type MockRule } from "./mock-plan.js";
import { mockResponses } from "./mock-responses.js";
import { anthropicMessage, anthropicMessages } from "./mock-anthropic.js";
import { AZURE_ROUTE } from "./mock-azure.js";
import { openAiChat, openAiCompletion, openAiEmbeddings } from "./mock-openai.js";

export type { MockRule };
export { mockVector };

/**
 * Our stand-in for AI providers: a real HTTP server on 127.0.0.1 speaking the OpenAI
 * (`/openai/v1/chat/completions`, `/openai/v1/embeddings`: mock-openai.ts; `/openai/v1/responses`:
 * mock-responses.ts), Anthropic (`/anthropic/v1/messages`: mock-anthropic.ts) and Azure OpenAI
 * (`/azure/openai/…`: mock-azure.ts) wire formats, JSON and SSE. AWS Bedrock (`/bedrock/model/{modelId}/…`,
 * mock-bedrock.ts) too, and Google's Gemini API with Vertex AI's token exchange (`/google/v1beta/models/{model}:…`,
 * `/google/token`, mock-gemini.ts). Tests and benchmarks point provider base URLs at it and steer it
 * with rules; without rules it answers at once (the proxy benchmark runs thousands of req/s).
 *
 * Answers are deterministic so tests can compute costs:
 * - reply `Hello from <model>` (or `rule.reply`), streamed one word per chunk;
 * - prompt_tokens = ceil(characters of all message text / 4), at least 1 (system, tool results
 *   and text parts count; images and tool-call arguments do not), unless `rule.usage`;
 * - completion_tokens = words of the reply sent (+ words of `rule.reasoning`, + ceil(tool-call
 *   arguments length / 4) with `rule.toolCall`), unless `rule.usage`;
 * - `max_tokens`/`max_completion_tokens` below the word count cuts the reply: finish_reason
 *   `length` (Anthropic `max_tokens`);
 * - embeddings: vectors of `dimensions` (default 8) values derived from a hash of each input.
 *
 * The providers' native batch APIs are served too (mock-batches.ts), steered by `mock.batches`.
 */

export interface RecordedUpstreamRequest {
  path: string;
  model: string;
  body: unknown;
  headers: Record<string, string | undefined>;
}

export interface MockUpstream {
  url: string;
  openaiBaseUrl: string;
  anthropicBaseUrl: string;
  /** Gemini API (`/models/{model}:generateContent`, …), and Vertex AI's token exchange beside it. */
  googleBaseUrl: string;
  /** Bedrock runtime (`/model/{modelId}/converse`, …). */
  bedrockBaseUrl: string;
  /** Azure OpenAI (`/openai/deployments/{deployment}/…`, `/openai/v1/…`). */
  azureBaseUrl: string;
  /** The key it expects; others get 401. */
  apiKey: string;
  requests: RecordedUpstreamRequest[];
  /** Requests whose client went away before the answer ended. */
  aborted: number;
  /** Resolves at the next abort not yet waited for (each call consumes one), rejects after timeoutMs. */
  waitForAbort(timeoutMs?: number): Promise<void>;
  /** Native batch APIs: fault switches and counters (mock-batches.ts). */
  batches: MockBatches;
  /** Scripted conversations (mock-script.ts); a scripted request is answered by its script, not by rules. */
  scripts: MockScripts;
  /** OpenAI's Videos API: job steps, fault switches and counters (mock-videos.ts). */
  videos: MockVideos;
  /** The providers' Files APIs for user files (mock-files.ts). */
  files: MockFiles;
  /** Rules are tried in the order added; the first that matches applies. */
  rule(rule: MockRule): void;
  /**
   * Forgets rules, requests, abort counts, batches, files, batch faults and video jobs; ids (`call_mock_<n>`, …) count
   * from 1 again.
   */
  reset(): void;
  close(): Promise<void>;
}

export { MOCK_UPSTREAM_API_KEY };

export async function startMockUpstream(
  options: { recordRequests?: boolean; port?: number } = {},
): Promise<MockUpstream> {
  const recordRequests = options.recordRequests ?? true;
  const rules: MockRule[] = [];
  const abortWaiters: Array<() => void> = [];
  let abortsWaitedFor = 0;
  let sequence = 0;
  // Batch items draw their ids from the live sequence, so ids never repeat between the two.
  const videos = new MockVideoStore();
  const files = new MockFileStore();
  const batches = new MockBatchStore((provider, body) => {
    sequence += 1;
    const input = { body, model: typeof body.model === "string" ? body.model : "", rule: undefined, id: sequence };
    return provider === "openai" ? openAiCompletion(input) : anthropicMessage(input);
  });

  const mock: MockUpstream = {
    url: "",
    openaiBaseUrl: "",
    anthropicBaseUrl: "",
    googleBaseUrl: "",
    bedrockBaseUrl: "",
    azureBaseUrl: "",
    apiKey: MOCK_UPSTREAM_API_KEY,
    requests: [],
    aborted: 0,
    batches,
    videos,
    files,
    scripts: new MockScripts(),
    waitForAbort(timeoutMs = 5_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (mock.aborted <= abortsWaitedFor) return false;
          abortsWaitedFor += 1;
          resolve();
          return true;
        };
        if (check()) return;
        const waiter = () => {
          if (!check()) return;
          clearTimeout(timer);
          abortWaiters.splice(abortWaiters.indexOf(waiter), 1);
        };
        const timer = setTimeout(() => {
          abortWaiters.splice(abortWaiters.indexOf(waiter), 1);
          reject(new Error(`mock upstream: no client abort within ${timeoutMs} ms`));
        }, timeoutMs);
        abortWaiters.push(waiter);
      });
    },
    rule(rule) {
      rules.push({ ...rule });
    },
    reset() {
      rules.length = 0;
      mock.requests.length = 0;
      mock.aborted = 0;
      abortsWaitedFor = 0;
      sequence = 0;
      batches.reset();
      mock.scripts.clear();
      videos.reset();
      files.reset();
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const takeRule = (model: string, key: string | undefined): MockRule | undefined => {
    const index = rules.findIndex(
      (rule) => (rule.model === undefined || rule.model === model) && (rule.key === undefined || rule.key === key),
    );
    const rule = rules[index];
    if (!rule) return undefined;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) rules.splice(index, 1);
    }
    return rule;
  };

  const server = http.createServer((req, res) => {
    const exchange = { cutByUs: false };
    res.on("close", () => {
      if (res.writableFinished || exchange.cutByUs) return;
      mock.aborted += 1;
      for (const waiter of [...abortWaiters]) waiter();
    });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const record = (body: unknown) => {
        if (recordRequests)
          mock.requests.push({ path: req.url ?? "", model: "", body, headers: flatHeaders(req.headers) });
      };
      if (handleFileRoute(files, req, res, Buffer.concat(chunks))) return;
      if (handleBatchRoute(batches, req, res, Buffer.concat(chunks), record)) return;
      if (videos.handle(req, res, Buffer.concat(chunks), record)) return;
      const url = req.url ?? "";
      const found = findRoute(req.method ?? "GET", url.split("?")[0] ?? "");
      if (!found)
        return sendJson(res, 404, {
          error: { message: `mock upstream: no route ${req.method} ${url}`, type: "not_found_error" },
        });
      const { route } = found;
      const raw = Buffer.concat(chunks);
      let body: Json;
      try {
        // An OAuth token exchange (mock-gemini.ts) posts a form; every API posts JSON.
        const form = header(req.headers["content-type"])?.startsWith("application/x-www-form-urlencoded") === true;
        const parsed: unknown = form
          ? Object.fromEntries(new URLSearchParams(raw.toString("utf8")))
          : JSON.parse(raw.toString("utf8"));
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
        body = parsed as Json;
      } catch {
        return route.sendError(res, 400, "the request body is not a JSON object");
      }
      const model = found.model || (typeof body.model === "string" ? body.model : "");
      if (recordRequests) mock.requests.push({ path: url, model, body, headers: flatHeaders(req.headers) });
      const key = route.credential(req, raw);
      if (!acceptedKey(key)) return route.refuse(res, key);
      const rule = mock.scripts.stepFor(body) ?? (rules.length === 0 ? undefined : takeRule(model, key));
      const answer = () => {
        if (res.destroyed) return;
        sequence += 1;
        guarded({ req, res, body, model, rule, id: sequence, exchange }, route);
      };
      if (rule?.hang) return;
      const release = () => (rule?.delayMs ? setTimeout(answer, rule.delayMs) : answer());
      // A scripted step has no `until` (ScriptStep is a subset of MockRule's fields).
      const until = (rule as MockRule | undefined)?.until;
      if (until) void until.then(release, release);
      else release();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  mock.url = `http://127.0.0.1:${port}`;
  mock.openaiBaseUrl = `${mock.url}/openai/v1`;
  mock.anthropicBaseUrl = `${mock.url}/anthropic/v1`;
  mock.googleBaseUrl = `${mock.url}/google/v1beta`;
  mock.bedrockBaseUrl = `${mock.url}/bedrock`;
  mock.azureBaseUrl = `${mock.url}/azure`;
  return mock;
}

/** A route of one fixed path, whose body names the model. */
function fixedPath(path: string, provider: Provider, answer: (x: Exchange) => void): MockRoute {
  return {
    match: (method, requested) => (method === "POST" && requested === path ? { model: "" } : undefined),
    credential: (req) =>
      provider === "openai"
        ? /^Bearer (.*)$/.exec(req.headers.authorization ?? "")?.[1]
        : header(req.headers["x-api-key"]),
    sendError: (res, status, message, headers) => sendError(res, provider, status, message, headers),
    refuse: (res, key) => refuseKey(provider, res, key),
    answer,
  };
}

/** The live-call routes, one list for every wire format; the first that matches answers. */
const ROUTES: MockRoute[] = [
  fixedPath("/openai/v1/chat/completions", "openai", openAiChat),
  fixedPath("/openai/v1/embeddings", "openai", openAiEmbeddings),
  fixedPath("/openai/v1/responses", "openai", mockResponses),
  fixedPath("/anthropic/v1/messages", "anthropic", anthropicMessages),
  AZURE_ROUTE,
  ...BEDROCK_ROUTES,
  ...GEMINI_ROUTES,
];

function findRoute(method: string, path: string): { route: MockRoute; model: string } | undefined {
  for (const route of ROUTES) {
    const matched = route.match(method, path);
    if (matched) return { route, model: matched.model };
  }
  return undefined;
}

/** The rule's status failure or raw body, in the route's format, else the route's answer. */
function guarded(x: Exchange, route: MockRoute): void {
  const { rule, res } = x;
  const headers: http.OutgoingHttpHeaders =
    rule?.retryAfter !== undefined ? { "retry-after": String(rule.retryAfter) } : {};
  if (rule?.rawBody !== undefined) {
    res.writeHead(rule.status ?? 200, { "content-type": "application/json", ...headers });
    res.end(rule.rawBody);
    return;
  }
  if (rule?.status !== undefined && (rule.status < 200 || rule.status >= 300)) {
    route.sendError(res, rule.status, `mock upstream failure ${rule.status}`, headers);
    return;
  }
  route.answer(x);
}

// `tsx test/upstream/mock-upstream.ts --port 9999`: a standalone mock for the bench and manual tries.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const portFlag = process.argv.indexOf("--port");
  const port = portFlag === -1 ? 0 : Number(process.argv[portFlag + 1]);
  const mock = await startMockUpstream({ recordRequests: false, port });
  // `--rule '<MockRule as JSON>'`: a standing rule for every request (the streams-burst bench's slow stream).
  const ruleFlag = process.argv.indexOf("--rule");
  if (ruleFlag !== -1) mock.rule(JSON.parse(process.argv[ruleFlag + 1] ?? "{}") as MockRule);
  console.log(mock.url);
  console.log(`openai base URL:    ${mock.openaiBaseUrl}`);
  console.log(`anthropic base URL: ${mock.anthropicBaseUrl}`);
  console.log(`api key:            ${mock.apiKey}`);
  const stop = () => void mock.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
