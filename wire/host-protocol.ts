/**
 * What an intern host (intern-host/, its own process) and the gateway say to each other.
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
 *   detaching (intern-host/host-runs.ts); the answer is the run's state after it
 * - `POST /shutdown` → 202, runs end and the host exits
 *
 * Errors are {"error": "<message>"}.
 *
 * @module
 */

export type ApprovalMode = "manual" | "auto";

/** Response header of a run's event stream: the host's name for that stream. */
export const ATTACHMENT_HEADER = "x-attachment-id";

/** The runtime settings a host applies itself (InternRuntimeConfig), its two deadlines in milliseconds. */
export type HostLimits = Pick<
  InternRuntimeConfig,
  | "maxOpenRuns"
  | "replayBytes"
  | "maxSteps"
  | "shellTimeoutMs"
  | "shellOutputBytes"
  | "shellLimits"
  | "fetchTimeoutMs"
  | "fetchBodyBytes"
> & {
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
  /** Fixed addresses for the fetch tool's hostnames, vetted like resolved ones. */
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
export type ParentMessage =
  | { type: "config"; config: HostConfig }
  | { type: "secrets"; id: number; secrets: ReleasedSecret[] }
  | { type: "secrets"; id: number; error: string }
  | { type: "shutdown" };

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
export type QuestionArguments =
  | { kind: "permission"; operation: string; command?: string; options: string[] }
  | { kind: "question"; question: string; options?: string[] };

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

/**
 * The interns' settings (GATEWAY_INTERN_*, read by server/platform/config.ts): the gateway's side,
 * intern hosts and the chat relay (server/services/interns/), and what it hands each host (HostLimits).
 */
export interface InternRuntimeConfig {
  /** A question unanswered this long cancels its run (300 s by default); rejected replies do not extend it. */
  interactionTimeoutSeconds: number;
  /** A run still going after this long is ended by its intern (410 `run_ended`). */
  runTimeoutSeconds: number;
  /** How long the gateway waits for a host to answer one call (504 `timeout` after it). */
  hostTimeoutMs: number;
  /** How long a host may take to start and answer its first health check. */
  hostStartTimeoutMs: number;
  /**
   * An instance's lease on the interns it hosts, renewed every third of it. Once it lapses (the
   * instance died) another instance, or this one restarted, boots the intern again.
   */
  leaseMs: number;
  /** Runs one intern holds open (running or paused on a question) at once; more answer 503 `busy`. */
  maxOpenRuns: number;
  /** Chat turns (prompts and answers) per intern per minute; more answer 429 `rate_limited`. 0 = no limit. */
  turnsPerMinute: number;
  /** Output of a run kept for a stream that attaches later; beyond it 410 `attachment_failed`. */
  replayBytes: number;
  /** Model calls in one run before the intern ends it. */
  maxSteps: number;
  shellTimeoutMs: number;
  /**
   * A root gateway runs each intern's shell as uid (and gid) base + the intern's number, so one
   * intern's commands reach neither the gateway's files nor another intern's. 0: as the gateway's user.
   */
  shellUidBase: number;
  /** stdout and stderr a shell command may return to the model (each), in bytes. */
  shellOutputBytes: number;
  /** The resource limits of every shell command (intern-host/agent/shell-tool.ts). */
  shellLimits: ShellLimits;
  /**
   * GATEWAY_INTERN_HOME_DIR: where the interns' homes are (`<it>/<intern id>`). Never inside the
   * data directory, which stays closed to every other OS user while each intern's user must
   * reach its own home.
   */
  homeDir: string;
  /** Interns provisioning or running at once in one organization (429 `intern_limit` beyond); 0 = no cap. */
  maxRunningPerOrg: number;
  /** Interns this instance provisions or runs at once (429 `intern_limit` beyond); 0 = no cap. */
  maxRunningPerInstance: number;
  fetchTimeoutMs: number;
  /** Response body the fetch tool returns to the model, in bytes. */
  fetchBodyBytes: number;
  /** GATEWAY_INTERN_FETCH_RESOLVE `host=address,…`: fixed addresses for the fetch tool (like curl --resolve). */
  fetchResolve: Record<string, string>;
  /**
   * GATEWAY_INTERN_FETCH_ALLOWED_HOSTS: hostnames and addresses the fetch tool may call although
   * they are loopback, private, link-local or metadata addresses (never the gateway's own ports).
   */
  fetchAllowedHosts: string[];
  /** REST base URL the hosts' model calls use; default this process's own HTTP listener. */
  gatewayUrl: string | undefined;
  /** Address the hosts' HTTP APIs listen on (GATEWAY_INTERN_HOST_LISTEN, default 127.0.0.1). */
  hostListen: string;
  /**
   * Hostname in a host's recorded origin: what other gateway instances and daemon clients
   * connect to. Default the listen address, or this machine's name when it listens on all.
   */
  hostAdvertise: string;
}

/** rlimits of each intern shell command, applied with prlimit (util-linux). */
export interface ShellLimits {
  /** Processes (and threads) of the intern's own OS user at once; applied only when it has one (a root gateway). */
  maxProcesses: number;
  /** Address space of each process, in MiB. */
  maxMemoryMiB: number;
  /** Size of any file a command writes, in MiB. */
  maxFileMiB: number;
  /** CPU time of each process, in seconds. */
  cpuSeconds: number;
}
