import { PERMISSION_OPTIONS, type ApprovalMode, type QuestionArguments } from "../../wire/host-protocol.js";
import { FetchRefused, runFetch, type FetchArguments, type FetchContext } from "./fetch-tool.js";
import type { ToolCall, ToolDefinition } from "./model-client.js";
import { runShell, type ShellSettings } from "./shell-tool.js";
import { errorMessage } from "../../wire/errors.js";

/**
 * The tools an intern's model may call, and how a call becomes the text of its tool result.
 * The shell and fetch are approval-bearing: in `manual` mode every command, and every request
 * (method and URL), is asked about first (a `svc.provide_input` permission question) unless the
 * run was told `allow_always` or `reject_always` for that tool already. `ask_user` puts the
 * model's own question to the user the same way.
 */
export const AGENT_TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "shell",
      description:
        "Run a command with /bin/sh in your own working directory. " +
        "Returns exit code, stdout and stderr (both cut at a size limit).",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
  },
  {
    type: "function",
    function: {
      name: "fetch",
      description:
        "Send an HTTP request. Write {{secrets.NAME}} in a header value or the body to use " +
        "a vault secret: it is filled in only for the host names the secret is bound to.",
      parameters: {
        type: "object",
        properties: {
          url: { type: "string" },
          method: { type: "string" },
          headers: { type: "object", additionalProperties: { type: "string" } },
          body: { type: "string" },
        },
        required: ["url"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "ask_user",
      description: "Ask the user a question and wait for the answer. With options, the answer is one of them.",
      parameters: {
        type: "object",
        properties: { question: { type: "string" }, options: { type: "array", items: { type: "string" } } },
        required: ["question"],
      },
    },
  },
];

export interface ToolContext {
  approvalMode: ApprovalMode;
  workDir: string;
  shell: ShellSettings;
  fetch: Omit<FetchContext, "signal" | "approve">;
  signal: AbortSignal;
  /** Puts a `svc.provide_input` question to the user; resolves with the accepted answer. */
  ask(question: QuestionArguments): Promise<string>;
  /** Standing decisions of this run (`allow_always` / `reject_always`), one per tool. */
  standing: Partial<Record<ApprovedOperation, "allow" | "reject">>;
}

/** The tools whose calls are asked about in manual mode. */
export type ApprovedOperation = "shell" | "fetch";

export async function runTool(call: ToolCall, context: ToolContext): Promise<string> {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(call.function.arguments || "{}");
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch {
    return failure(`the arguments of ${call.function.name} are not a JSON object`);
  }
  switch (call.function.name) {
    case "shell":
      return shell(args, context);
    case "fetch":
      return fetchTool(args, context);
    case "ask_user":
      return askUser(args, context);
    default:
      return failure(`there is no tool named ${call.function.name}`);
  }
}

async function shell(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const command = args.command;
  if (typeof command !== "string" || command.trim() === "") return failure("shell needs a non-empty command");
  if (!(await allowed("shell", command, context))) return failure("the user did not allow this command");
  return JSON.stringify(await runShell(command, context.workDir, context.shell, context.signal));
}

/**
 * Whether the call may go ahead: always in `auto` mode; in `manual` mode the run's standing
 * decision for the tool, else the user's answer.
 */
async function allowed(operation: ApprovedOperation, command: string, context: ToolContext): Promise<boolean> {
  if (context.approvalMode !== "manual") return true;
  const standing = context.standing[operation];
  if (standing) return standing === "allow";
  const answer = await context.ask({ kind: "permission", operation, command, options: [...PERMISSION_OPTIONS] });
  if (answer === "allow_always") context.standing[operation] = "allow";
  if (answer === "reject_always") context.standing[operation] = "reject";
  return answer === "allow_once" || answer === "allow_always";
}

async function fetchTool(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  // The URL as parsed, never a header or the body: those are where secrets go.
  const approve = (method: string, url: URL) => allowed("fetch", `${method} ${url.href}`, context);
  try {
    return JSON.stringify(
      await runFetch(args as unknown as FetchArguments, { ...context.fetch, signal: context.signal, approve }),
    );
  } catch (err) {
    if (context.signal.aborted) throw err;
    return failure(err instanceof FetchRefused ? err.message : `the request failed: ${errorMessage(err)}`);
  }
}

async function askUser(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const question = args.question;
  if (typeof question !== "string" || question.trim() === "") return failure("ask_user needs a question");
  const options = Array.isArray(args.options)
    ? args.options.filter((option): option is string => typeof option === "string" && option !== "")
    : [];
  const answer = await context.ask({ kind: "question", question, ...(options.length > 0 ? { options } : {}) });
  return JSON.stringify({ answer });
}

function failure(message: string): string {
  return JSON.stringify({ error: message });
}
