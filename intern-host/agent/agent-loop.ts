import type { RunUsage } from "../../wire/host-protocol.js";
import { AGENT_TOOLS, runTool, type ToolContext } from "./agent-tools.js";
import { addUsage, callModel, ModelCallError, type ChatMessage, type ModelTurn } from "./model-client.js";

/**
 * One run of an intern's agent: the session's conversation plus the new prompt goes to the model
 * (through the gateway); its tool calls are carried out and their results sent back, until the
 * model answers without a tool call, the run hits its step limit, or it is cancelled (the signal:
 * the loop then throws). Messages that steered the run are added before the next model call; one
 * that arrived during what would have been the last call gets a call of its own. The conversation
 * is saved after every step, so the next run of the session continues from it, and a host that
 * dies mid-run loses at most the step it was in.
 */
export interface AgentSettings {
  gatewayUrl: string;
  apiKey: string;
  model: string | null;
  instructions: string;
  maxSteps: number;
}

export interface AgentRun {
  sessionId: string;
  prompt: string;
  /** The session's conversation so far (no system message). */
  history: ChatMessage[];
  tools: Omit<ToolContext, "signal">;
  signal: AbortSignal;
  content(text: string): void;
  /** The run's usage so far, after every model call (a cancelled run still reports it). */
  onUsage(usage: RunUsage | null): void;
  /**
   * Steering messages that arrived since the last call. `closing`: the run ends unless some are
   * waiting; when none are, none are accepted any more (they would never be read).
   */
  takeMessages(closing: boolean): string[];
  saveHistory(messages: ChatMessage[]): Promise<void>;
}

export interface AgentOutcome {
  status: "stop" | "error";
  message?: string;
  usage: RunUsage | null;
}

const PREAMBLE =
  "You are an intern: a persistent agent with a shell in your own working directory, " +
  "an HTTP fetch tool and a way to ask the user (ask_user). " +
  "Vault secrets are used as {{secrets.NAME}} in fetch headers or bodies; you never see their values.";

export async function runAgent(settings: AgentSettings, run: AgentRun): Promise<AgentOutcome> {
  const system: ChatMessage = {
    role: "system",
    content: settings.instructions ? `${PREAMBLE}\n\n${settings.instructions}` : PREAMBLE,
  };
  const conversation: ChatMessage[] = [...run.history, { role: "user", content: run.prompt }];
  try {
    return await steps(settings, run, system, conversation);
  } finally {
    // Also when cancelled: the next run of the session continues from what happened so far.
    await run.saveHistory(withClosedToolCalls(conversation));
  }
}

async function steps(
  settings: AgentSettings,
  run: AgentRun,
  system: ChatMessage,
  conversation: ChatMessage[],
): Promise<AgentOutcome> {
  const toolContext: ToolContext = { ...run.tools, signal: run.signal };
  let usage: RunUsage | null = null;
  const steered = (closing: boolean): boolean => {
    const messages = run.takeMessages(closing);
    for (const message of messages) conversation.push({ role: "user", content: message });
    return messages.length > 0;
  };
  for (let step = 0; step < settings.maxSteps; step++) {
    steered(false);
    let turn: ModelTurn;
    try {
      turn = await callModel({
        gatewayUrl: settings.gatewayUrl,
        apiKey: settings.apiKey,
        model: settings.model,
        sessionId: run.sessionId,
        messages: [system, ...conversation],
        tools: AGENT_TOOLS,
        signal: run.signal,
        onContent: run.content,
      });
    } catch (err) {
      if (run.signal.aborted || !(err instanceof ModelCallError)) throw err;
      return { status: "error", message: err.message, usage };
    }
    usage = addUsage(usage, turn.usage);
    run.onUsage(usage);
    conversation.push({
      role: "assistant",
      content: turn.content === "" && turn.toolCalls.length > 0 ? null : turn.content,
      ...(turn.toolCalls.length > 0 ? { tool_calls: turn.toolCalls } : {}),
    });
    if (turn.toolCalls.length === 0) {
      // Saved before the inbox closes: a message refused from here on starts a new run of the
      // session (the gateway's relay), which must find this answer in the conversation.
      await run.saveHistory(conversation);
      if (!steered(true)) return { status: "stop", usage };
      continue;
    }
    for (const call of turn.toolCalls)
      conversation.push({ role: "tool", tool_call_id: call.id, content: await runTool(call, toolContext) });
    await run.saveHistory(conversation);
  }
  return { status: "error", message: `the run reached its limit of ${settings.maxSteps} model calls`, usage };
}

/** Every tool call needs its result before the model is called again; an interrupted one gets a note. */
function withClosedToolCalls(conversation: ChatMessage[]): ChatMessage[] {
  const answered = new Set(conversation.flatMap((message) => (message.role === "tool" ? [message.tool_call_id] : [])));
  // Only the last assistant message can have calls without results, so the notes can follow at the end.
  const open = conversation
    .flatMap((message) => (message.role === "assistant" ? (message.tool_calls ?? []) : []))
    .filter((call) => !answered.has(call.id));
  return [
    ...conversation,
    ...open.map(
      (call): ChatMessage => ({
        role: "tool",
        tool_call_id: call.id,
        content: JSON.stringify({ error: "the run ended before this tool call finished" }),
      }),
    ),
  ];
}
