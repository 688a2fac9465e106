import type { Json } from "./mock-wire.js";

/**
 * A scripted model for the mock upstream: a conversation whose user messages contain
 * `[script:<name>]` is answered step by step from the script of the last such message, the step
 * being the number of assistant messages since that message. So an agent that sends its whole
 * conversation on every call (as intern hosts do) is driven deterministically, and any number of
 * conversations may follow the same script at once, on any gateway instance.
 *
 * A step is answered like a MockRule (see mock-upstream.ts): `reply` (streamed word by word),
 * `toolCall`, `delayMs`, `hang`, `chunkDelayMs`, `status`. In `reply`, `{{last_tool_result}}` is
 * replaced by the content of the conversation's last tool message. Past its last step a script
 * answers "script finished".
 */
export interface ScriptStep {
  reply?: string;
  toolCall?: { name: string; arguments: string };
  delayMs?: number;
  hang?: boolean;
  chunkDelayMs?: number;
  status?: number;
}

/** A list of steps, or a function of the conversation since the script's prompt. */
export type Script = ScriptStep[] | ((conversation: Json[]) => ScriptStep);

const MARKER = /\[script:([A-Za-z0-9_-]+)\]/;

export class MockScripts {
  private readonly scripts = new Map<string, Script>();

  define(name: string, script: Script): void {
    this.scripts.set(name, script);
  }

  clear(): void {
    this.scripts.clear();
  }

  /** The step that answers this request, or undefined when it follows no script. */
  stepFor(body: Json): ScriptStep | undefined {
    if (this.scripts.size === 0 || !Array.isArray(body.messages)) return undefined;
    const all = body.messages.filter((message): message is Json => typeof message === "object" && message !== null);
    const start = all.findLastIndex((message) => message.role === "user" && MARKER.test(textOf(message.content)));
    if (start === -1) return undefined;
    const script = this.scripts.get(MARKER.exec(textOf(all[start]!.content))![1]!);
    if (!script) return undefined;
    const messages = all.slice(start);
    const step =
      typeof script === "function"
        ? script(messages)
        : (script[messages.filter((message) => message.role === "assistant").length] ?? { reply: "script finished" });
    if (step.reply === undefined || !step.reply.includes("{{last_tool_result}}")) return step;
    const lastTool = messages.filter((message) => message.role === "tool").at(-1);
    return {
      ...step,
      reply: step.reply
        .split("{{last_tool_result}}")
        .join(typeof lastTool?.content === "string" ? lastTool.content : ""),
    };
  }
}

/** The text of a message: a string, or the text blocks of the Anthropic format. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof part === "object" && part !== null && typeof (part as Json).text === "string"
        ? ((part as Json).text as string)
        : "",
    )
    .join("");
}
