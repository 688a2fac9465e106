import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Test } from "uvu";
import { suite } from "./suite.js";
import * as assert from "uvu/assert";
import type { LocalInternHosts } from "../../server/services/interns/host-manager.js";
import { eventually } from "./eventually.js";
import { startInferenceGateway, type InferenceGateway } from "./inference-gateway.js";
import { takeSseBlocks } from "./sse.js";
import { at, call, type Reply } from "./http.js";
import { seedOrganization } from "./seed.js";
import { makeTempDir, removeTempDir } from "./temp-dirs.js";

/**
 * A gateway with the real intern runtime (host processes, agent, chat relay) whose models are the
 * mock upstream, so a scripted model (test/upstream/mock-script.ts) drives the agents; and an
 * organization in the interns programme with a management key in its default workspace.
 */
export interface RuntimeEnv extends InferenceGateway {
  hosts: LocalInternHosts;
  organizationId: string;
  workspaceId: string;
  key: string;
  /** The test's own directory: the gateway's data directory is `data` in it, the interns' homes are `interns/<id>`. */
  dataDir: string;
}

export async function startRuntimeGateway(env: Record<string, string> = {}): Promise<RuntimeEnv> {
  const dataDir = makeTempDir("intern-runtime");
  const dirs = { GATEWAY_DATA_DIR: path.join(dataDir, "data"), GATEWAY_INTERN_HOME_DIR: path.join(dataDir, "interns") };
  // Short keepalives so that streams waiting on a slow model show them; limits off unless a test sets them.
  const inference = await startInferenceGateway({
    ...dirs,
    GATEWAY_SSE_KEEPALIVE_MS: "200",
    GATEWAY_INTERN_TURNS_PER_MINUTE: "0",
    GATEWAY_RATE_LIMIT_REQUESTS: "0",
    ...env,
  });
  const org = await seedOrganization(`interns-${path.basename(dataDir)}`, ["interns"]);
  return {
    ...inference,
    hosts: inference.gw.gateway.deps.internHosts as LocalInternHosts,
    organizationId: org.organizationId,
    workspaceId: org.workspaceId,
    key: org.key,
    dataDir,
    // The interns' homes and the gateway's data (its files, its hosts' tokens) go with the gateway.
    async stop() {
      await inference.stop();
      await removeTempDir(dataDir);
    },
  };
}

export interface RuntimeContext {
  env: RuntimeEnv;
  /** A running intern made for the suite ("" without `intern`). */
  internId: string;
}

/** A suite with its own runtime gateway (`settings` as environment) and, named `intern`, a running intern. */
export function runtimeSuite(
  title: string,
  options: { settings?: Record<string, string>; intern?: string } = {},
): Test<RuntimeContext> {
  const test = suite<RuntimeContext>(title);
  test.before(async (context) => {
    context.env = await startRuntimeGateway(options.settings);
    context.internId = options.intern ? await runningInternId(context.env, options.intern) : "";
  });
  test.after(async ({ env }) => {
    await env.stop();
  });
  return test;
}

/** Creates and provisions an intern (model `mock/chat`) and waits until it runs; answers its id. */
export async function runningInternId(
  env: RuntimeEnv,
  name: string,
  body: Record<string, unknown> = {},
  key = env.key,
): Promise<string> {
  const created = await call(env.gw.url, "POST", "/api/v1/interns", {
    key,
    body: { name, model: "mock/chat", provision: true, workspace_id: env.workspaceId, ...body },
  });
  if (created.status !== 201) throw new Error(`POST /interns answered ${created.status}: ${created.text}`);
  const id = at(created.body, "data", "id") as string;
  // A failed provisioning never turns into running: thrown from the read, it fails at once.
  const status = async (): Promise<unknown> => {
    const got = await call(env.gw.url, "GET", `/api/v1/interns/${id}`, { key });
    if (at(got.body, "data", "status") === "failed")
      throw new Error(`intern ${name} failed to provision: ${String(at(got.body, "data", "last_failure_message"))}`);
    return at(got.body, "data", "status");
  };
  await eventually(status, `intern ${name} runs`, { until: (now) => now === "running" });
  return id;
}

/**
 * One chat request read incrementally: `next()` gives the stream's `data:` payloads one at a time
 * (JSON, or `[DONE]`), so a test can act between two of them; `: keepalive` comments are counted.
 */
export class ChatStream {
  keepalives = 0;
  private buffered = "";
  // Streaming decode: a character split between two reads must arrive whole.
  private readonly decoder = new TextDecoder();
  private readonly queue: unknown[] = [];
  private ended = false;

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined,
    readonly body: unknown,
    private readonly abortController: AbortController,
  ) {}

  static async open(base: string, key: string, internId: string, body: unknown): Promise<ChatStream> {
    const abort = new AbortController();
    const res = await fetch(`${base}/api/v1/interns/${internId}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON: kept as text.
      }
      return new ChatStream(res.status, res.headers, undefined, parsed, abort);
    }
    return new ChatStream(res.status, res.headers, res.body!.getReader(), undefined, abort);
  }

  get isStream(): boolean {
    return this.reader !== undefined;
  }

  /** The next payload; undefined once the stream has ended. */
  async next(): Promise<unknown> {
    while (this.queue.length === 0 && !this.ended) {
      const chunk = await this.reader!.read();
      if (chunk.done) {
        this.ended = true;
        break;
      }
      const blocks = takeSseBlocks(this.buffered + this.decoder.decode(chunk.value, { stream: true }));
      this.buffered = blocks.rest;
      this.keepalives += blocks.comments;
      for (const event of blocks.events) this.queue.push(event.data);
    }
    return this.queue.shift();
  }

  /** Every remaining payload, through the end of the stream. */
  async rest(): Promise<unknown[]> {
    const out: unknown[] = [];
    for (let next = await this.next(); next !== undefined; next = await this.next()) out.push(next);
    return out;
  }

  /** Reads until a payload matches; answers it (fails when the stream ends first). */
  async until(match: (payload: unknown) => boolean): Promise<unknown> {
    for (let next = await this.next(); next !== undefined; next = await this.next()) if (match(next)) return next;
    throw new Error("the stream ended before the awaited event");
  }

  abort(): void {
    this.abortController.abort();
  }
}

/** Chunk helpers. */
export const contentOf = (payloads: unknown[]): string =>
  payloads.map((p) => (at(p, "choices", 0, "delta", "content") as string | undefined) ?? "").join("");
export const finishOf = (payload: unknown): unknown => at(payload, "choices", 0, "finish_reason");
export const isQuestion = (payload: unknown): boolean =>
  Array.isArray(at(payload, "choices", 0, "delta", "tool_calls")) &&
  (at(payload, "choices", 0, "delta", "tool_calls") as unknown[]).length > 0;
export const isFinal = (payload: unknown): boolean =>
  Array.isArray(at(payload, "choices")) && (at(payload, "choices") as unknown[]).length === 0;

/** The request that answers a question chunk: the assistant echo plus the tool message. */
export function answerBody(sessionId: string, question: unknown, answer: string): Record<string, unknown> {
  const toolCall = at(question, "choices", 0, "delta", "tool_calls", 0) as Record<string, unknown>;
  return {
    stream: true,
    session_id: sessionId,
    messages: [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: toolCall.id, type: "function", function: toolCall.function }],
      },
      { role: "tool", tool_call_id: toolCall.id, content: answer },
    ],
  };
}

/** A chat request with one user prompt. */
export function promptBody(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { stream: true, messages: [{ role: "user", content }], ...extra };
}

/** A scripted model step that calls the shell. */
export function shellStep(command: string): { toolCall: { name: string; arguments: string } } {
  return { toolCall: { name: "shell", arguments: JSON.stringify({ command }) } };
}

/**
 * Runs `commands` through the intern's shell, one model step each, in one run scripted as `name`;
 * answers each command's result as the model saw it (`exit_code`, `stdout`, `stderr`, `timed_out`, …).
 * `whileRunning` watches the run from the side (`ended()` turns true once its stream has ended).
 */
export async function shellResults(
  env: RuntimeEnv,
  internId: string,
  name: string,
  commands: string[],
  options: { whileRunning?: (ended: () => boolean) => Promise<void> } = {},
): Promise<Array<Record<string, unknown>>> {
  env.upstream.scripts.define(name, [...commands.map(shellStep), { reply: "done" }]);
  const stream = await ChatStream.open(env.gw.url, env.key, internId, promptBody(`[script:${name}] go`));
  let ended = false;
  const payloads = stream.rest().finally(() => (ended = true));
  await options.whileRunning?.(() => ended);
  assert.is(contentOf(await payloads), "done");
  const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Array<Record<string, unknown>>;
  return messages
    .filter((message) => message.role === "tool")
    .map((message) => JSON.parse(message.content as string) as Record<string, unknown>);
}

/** The processes whose real user is `uid` (an intern's shell user), from /proc. */
export function processesOf(uid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) === uid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** An error answer of the intern chat: status, `metadata.reason` and `retryable`. */
export function assertReason(res: Reply, status: number, reason: string, retryable: boolean): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status);
  assert.is(at(res.body, "error", "metadata", "reason"), reason, res.text);
  assert.is(at(res.body, "error", "metadata", "retryable"), retryable);
}

/** Starts a manual-approval run of `script` and reads its question response through `[DONE]`. */
export async function pausedQuestion(
  env: RuntimeEnv,
  internId: string,
  script: string,
): Promise<{ question: unknown; sessionId: string; toolCallId: string }> {
  const stream = await ChatStream.open(
    env.gw.url,
    env.key,
    internId,
    promptBody(`[script:${script}] go`, { approval_mode: "manual" }),
  );
  assert.is(stream.status, 200, JSON.stringify(stream.body));
  const question = await stream.until(isQuestion);
  const final = (await stream.rest()).find(isFinal);
  return {
    question,
    sessionId: at(final, "session_id") as string,
    toolCallId: at(question, "choices", 0, "delta", "tool_calls", 0, "id") as string,
  };
}
