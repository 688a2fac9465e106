import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { readSse } from "../../wire/sse-reader.js";
import type { RunUsage } from "../../wire/host-protocol.js";
import { errorMessage } from "../../wire/errors.js";

/**
 * The agent's model calls: `POST /api/v1/chat/completions` on the gateway itself with the intern's
 * own key, streamed, so routing, governance, budgets, rate limits and the ledger treat the intern
 * like any other caller. Content is passed on as it arrives; tool calls are assembled from their
 * deltas. A 429 that says when to come back (a rate limit's window, docs/api/limits.md) is waited
 * out, as a batch item waits, rather than ending the run.
 */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ModelTurn {
  content: string;
  toolCalls: ToolCall[];
  usage: RunUsage | null;
}

export interface ModelCall {
  gatewayUrl: string;
  apiKey: string;
  model: string | null;
  /** The intern's chat session: the gateway's ledger groups the run's calls by it. */
  sessionId: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  signal: AbortSignal;
  onContent(text: string): void;
}

/** The gateway refused or broke the call; `status` is its HTTP status (0 when none came). */
export class ModelCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** How many 429s one model call waits out, and the longest wait it accepts from Retry-After. */
const RATE_LIMIT_WAITS = 3;
const MAX_WAIT_S = 60;

export async function callModel(call: ModelCall): Promise<ModelTurn> {
  const body = {
    ...(call.model ? { model: call.model } : {}),
    session_id: call.sessionId,
    messages: call.messages,
    tools: call.tools,
    stream: true,
  };
  let response: Awaited<ReturnType<typeof request>>;
  for (let waits = 0; ; waits++) {
    try {
      response = await request(`${call.gatewayUrl}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${call.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: call.signal,
      });
    } catch (err) {
      if (call.signal.aborted) throw err;
      throw new ModelCallError(0, `the gateway could not be reached (${errorMessage(err)})`);
    }
    const waitS = waits < RATE_LIMIT_WAITS ? rateLimitWait(response) : undefined;
    if (waitS === undefined) break;
    await response.body.dump();
    await sleep(waitS * 1000, undefined, { signal: call.signal });
  }
  if (response.statusCode !== 200) {
    const text = await response.body.text().catch(() => "");
    throw new ModelCallError(
      response.statusCode,
      `the gateway answered ${response.statusCode}: ${errorMessageOf(text)}`,
    );
  }
  const turn: ModelTurn = { content: "", toolCalls: [], usage: null };
  const calls = new Map<number, ToolCall>();
  let done = false;
  for await (const { data } of readSse(response.body)) {
    if (data === "[DONE]") {
      done = true;
      break;
    }
    const chunk = JSON.parse(data) as StreamChunk;
    if (chunk.error)
      throw new ModelCallError(
        chunk.error.code ?? 0,
        `the model call failed: ${chunk.error.message ?? "unknown error"}`,
      );
    if (chunk.usage) turn.usage = usageOf(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === "string" && delta.content !== "") {
        turn.content += delta.content;
        call.onContent(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        const index = part.index ?? 0;
        const current = calls.get(index) ?? {
          id: "",
          type: "function" as const,
          function: { name: "", arguments: "" },
        };
        if (part.id) current.id = part.id;
        if (part.function?.name) current.function.name += part.function.name;
        if (part.function?.arguments) current.function.arguments += part.function.arguments;
        calls.set(index, current);
      }
    }
  }
  if (!done) throw new ModelCallError(0, "the model stream ended before [DONE]");
  turn.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, toolCall]) => toolCall);
  return turn;
}

interface StreamChunk {
  error?: { code?: number; message?: string };
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number; cost?: number };
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
  }>;
}

function usageOf(usage: NonNullable<StreamChunk["usage"]>): RunUsage {
  const prompt = usage.prompt_tokens ?? 0;
  const completion = usage.completion_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage.total_tokens ?? prompt + completion,
    ...(typeof usage.cost === "number" ? { cost: usage.cost } : {}),
  };
}

/**
 * The seconds a 429 asks to wait, when it is one to wait out: it says when, soon enough, and not
 * that retrying cannot help.
 */
function rateLimitWait(response: Awaited<ReturnType<typeof request>>): number | undefined {
  if (response.statusCode !== 429 || response.headers["x-should-retry"] === "false") return undefined;
  const seconds = Number(response.headers["retry-after"]);
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_WAIT_S ? seconds : undefined;
}

function errorMessageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") return parsed.error.message;
  } catch {
    // Not the gateway's error envelope: its first characters say enough.
  }
  return text.slice(0, 200) || "no details";
}

/** Adds one model call's usage to the run's. */
export function addUsage(total: RunUsage | null, turn: RunUsage | null): RunUsage | null {
  if (!turn) return total;
  if (!total) return { ...turn };
  const cost = total.cost === undefined && turn.cost === undefined ? undefined : (total.cost ?? 0) + (turn.cost ?? 0);
  return {
    prompt_tokens: total.prompt_tokens + turn.prompt_tokens,
    completion_tokens: total.completion_tokens + turn.completion_tokens,
    total_tokens: total.total_tokens + turn.total_tokens,
    ...(cost === undefined ? {} : { cost: Number(cost.toFixed(12)) }),
  };
}
