import type { InternRuntimeConfig } from "../server/platform/config.js";

/**
 * What an intern host (this folder, its own process) and the gateway say to each other.
 *
 * The parent gateway talks to its child over the Node IPC channel: the configuration with the
 * credentials (never in argv or the environment, where `ps` and /proc would show them), the
 * secret releases of the fetch tool, and shutdown. Everyone else (the relay of any gateway
 * instance, a terminal client holding the daemon token) uses the host's HTTP API (127.0.0.1 unless configured),
 * every request with `Authorization: Bearer <token>`:
 *
 * - `GET /health` → 200 {intern_id, open_runs}
 * - `GET /runs` → 200 {data: [{id, session_id, status, approval_mode, pending: {tool_call_id,
 *   deadline_at} | null}]}, open and recently ended runs
 * - `POST /runs` {run_id, session_id, prompt, approval_mode} → 200 NDJSON stream of RunEvent from
 *   the start; 503 when the intern already holds its maximum of open runs
 * - `GET /runs/{id}/events?after=N` → 200 NDJSON stream of the events after seq N, then live;
 *   410 when some of them are no longer retained; 404 for an unknown run
 * - `POST /runs/{id}/answers` {tool_call_id, answer} → 202 accepted; 200 {already_answered, seq}
 *   when it was answered on the host already and the run goes on; 400 not accepted; 404 no such
 *   question; 409 the run has ended
 * - `POST /runs/{id}/messages` {content} → 202 (read by the run before its next model call); 409
 *   ended (or ending: its agent has answered and reads no more); 429 when the run already holds
 *   its maximum of unread messages
 * - `DELETE /runs/{id}` → 200, the run is cancelled
 * - `DELETE /runs/{id}/attachments/{attachment}` → 200 {status, end_status, watchers}: that
 *   stream (named by the `x-attachment-id` header of its 200) leaves the run, by the rule of
 *   detaching (host-runs.ts); the answer is the run's state after it
 * - `POST /shutdown` → 202, runs end and the host exits
 *
 * Errors are {"error": "<message>"}.
 */
export type ApprovalMode = "manual" | "auto";

/** Response header of a run's event stream: the host's name for that stream. */
export const ATTACHMENT_HEADER = "x-attachment-id";

/** The runtime settings a host applies itself (server/platform/config.ts), its two deadlines in milliseconds. */
export type HostLimits = Pick<InternRuntimeConfig, "maxOpenRuns" | "replayBytes" | "maxSteps" | "shellTimeoutMs" | "shellOutputBytes" | "shellLimits" | "fetchTimeoutMs" | "fetchBodyBytes"> & {
  interactionTimeoutMs: number;
  runTimeoutMs: number;
};

export interface HostConfig {
  internId: string;
  /** Bearer token of the HTTP API. */
  token: string;
  /** The intern's own gateway API key: its model calls are the gateway's like any other. */
  apiKey: string;
  /** REST base URL of the gateway, e.g. http://127.0.0.1:8080 */
  gatewayUrl: string;
  /** Model slug; null leaves the choice to the gateway. */
  model: string | null;
  instructions: string;
  /** The shell's working directory. */
  workDir: string;
  /** Sessions (conversation history) of the host, outside the shell's reach by default. */
  stateDir: string;
  /** The OS user the shell runs as (a root gateway's isolation); null: the host's own user. */
  shellUser: ShellUser | null;
  /** The shell's TMPDIR, in the intern's home. */
  tmpDir: string;
  limits: HostLimits;
  /** Fixed addresses for the fetch tool's host names, vetted like resolved ones. */
  fetchResolve: Record<string, string>;
  /** Hosts the fetch tool may call although they are not public (GATEWAY_INTERN_FETCH_ALLOWED_HOSTS). */
  fetchAllowedHosts: string[];
  /** The gateway's own HTTP and gRPC ports: the fetch tool reaches neither, on any address. */
  gatewayPorts: number[];
  /** Address the HTTP API listens on (127.0.0.1 unless instances on other machines relay to it). */
  listenAddress: string;
}

export interface ReleasedSecret {
  name: string;
  value: string;
}

/** Parent → host over IPC. */
export type ParentMessage = { type: "config"; config: HostConfig } | { type: "secrets"; id: number; secrets: ReleasedSecret[] } | { type: "secrets"; id: number; error: string } | { type: "shutdown" };

/** Host → parent over IPC. */
export type HostMessage = { type: "ready"; port: number } | { type: "secrets"; id: number; url: string };

export type RunEndStatus = "stop" | "cancelled" | "deadline" | "error";

export interface RunUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost?: number;
}

/** The `arguments` of a `svc.provide_input` question. */
export type QuestionArguments = { kind: "permission"; operation: string; command?: string; options: string[] } | { kind: "question"; question: string; options?: string[] };

export const PERMISSION_OPTIONS = ["allow_once", "allow_always", "reject_once", "reject_always"] as const;

/** One line of a run's NDJSON event stream. */
export type RunEvent = { seq: number } & (
  | { type: "content"; text: string }
  | { type: "question"; tool_call_id: string; arguments: string; deadline_at: string }
  | { type: "answered"; tool_call_id: string }
  | { type: "end"; status: RunEndStatus; message?: string; usage: RunUsage | null }
);

export interface StartRunBody {
  run_id: string;
  session_id: string;
  prompt: string;
  approval_mode: ApprovalMode;
}

/** The OS user an intern's shell runs as (the gateway's interns service gives each intern its own). */
export interface ShellUser {
  uid: number;
  gid: number;
}
