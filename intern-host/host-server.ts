/**
 * The host's HTTP API (see host-protocol.ts), for the gateway's relay and for terminal clients
 * holding the daemon token. Every request needs `Authorization: Bearer <token>`.
 *
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import http from "node:http";
import { ATTACHMENT_HEADER, type HostConfig, type RunEvent, type StartRunBody } from "../wire/host-protocol.js";
import { MAX_UNREAD_BYTES, MAX_UNREAD_MESSAGES, type Consumer, type HostRun, type HostRuns } from "./host-runs.js";
import { errorMessage } from "../wire/errors.js";

const MAX_BODY_BYTES = 2 * 1024 * 1024;

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function createHostServer(config: HostConfig, runs: HostRuns, shutdown: () => void): http.Server {
  const expected = digest(`Bearer ${config.token}`);

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!timingSafeEqual(digest(req.headers.authorization ?? ""), expected))
      throw new HttpFailure(401, "a valid daemon token is required");
    const url = new URL(req.url ?? "/", "http://host");
    const parts = url.pathname.split("/").filter((part) => part !== "");
    const method = req.method ?? "GET";
    if (method === "GET" && url.pathname === "/health")
      return json(res, 200, { intern_id: config.internId, open_runs: runs.openRuns() });
    if (method === "POST" && url.pathname === "/shutdown") {
      json(res, 202, { stopping: true });
      shutdown();
      return;
    }
    if (method === "POST" && url.pathname === "/runs") return startRun(req, res);
    if (method === "GET" && url.pathname === "/runs") {
      const data = runs.list().map((run) => {
        const pending = run.pendingQuestion;
        return {
          id: run.id,
          session_id: run.sessionId,
          status: run.status,
          approval_mode: run.approvalMode,
          pending: pending ? { tool_call_id: pending.toolCallId, deadline_at: pending.deadline.toISOString() } : null,
        };
      });
      return json(res, 200, { data });
    }
    if (parts[0] !== "runs" || parts[1] === undefined) throw new HttpFailure(404, `no route ${method} ${url.pathname}`);
    const run = runs.get(parts[1]);
    if (!run) throw new HttpFailure(404, `no run ${parts[1]}`);
    const action = parts[2];
    if (method === "DELETE" && action === undefined) {
      run.cancel("cancelled", "the run was cancelled");
      return json(res, 200, { status: run.status });
    }
    if (method === "DELETE" && action === "attachments" && parts[3] !== undefined && parts.length === 4) {
      // Unknown when its connection closed first: it has left either way, and the state says how that went.
      run.detach(parts[3]);
      return json(res, 200, { status: run.status, end_status: run.endStatus ?? null, watchers: run.consumers.size });
    }
    if (method === "GET" && action === "events") {
      const after = Number(url.searchParams.get("after") ?? "0");
      if (!Number.isInteger(after) || after < 0) throw new HttpFailure(400, "after must be a non-negative integer");
      return stream(res, run, after);
    }
    if (method === "POST" && action === "answers") {
      const body = await readJson(req);
      if (typeof body.tool_call_id !== "string") throw new HttpFailure(400, "tool_call_id is required");
      const outcome = run.answer(body.tool_call_id, body.answer);
      if (outcome.status === 202) return json(res, 202, { accepted: true });
      if (outcome.status === 200) return json(res, 200, { already_answered: true, seq: outcome.seq });
      throw new HttpFailure(outcome.status, outcome.error);
    }
    if (method === "POST" && action === "messages") {
      const body = await readJson(req);
      if (typeof body.content !== "string" || body.content === "")
        throw new HttpFailure(400, "content must be a non-empty string");
      const outcome = run.steer(body.content);
      if (outcome === "ended") throw new HttpFailure(409, "the run has ended");
      if (outcome === "full")
        throw new HttpFailure(
          429,
          `the run holds ${MAX_UNREAD_MESSAGES} messages or ${MAX_UNREAD_BYTES} bytes it has not read yet`,
        );
      return json(res, 202, { queued: true });
    }
    throw new HttpFailure(404, `no route ${method} ${url.pathname}`);
  }

  async function startRun(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = (await readJson(req)) as Partial<StartRunBody>;
    if (
      typeof body.run_id !== "string" ||
      typeof body.session_id !== "string" ||
      typeof body.prompt !== "string" ||
      (body.approval_mode !== "manual" && body.approval_mode !== "auto")
    ) {
      throw new HttpFailure(400, "run_id, session_id, prompt and approval_mode (manual or auto) are required");
    }
    const run = await runs.start(body as StartRunBody);
    if (run === "busy") throw new HttpFailure(503, "the intern cannot hold another run open");
    if (run === "exists") throw new HttpFailure(409, `run ${body.run_id} exists already`);
    stream(res, run, 0);
  }

  return http.createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const status = err instanceof HttpFailure ? err.status : 500;
      const message = err instanceof HttpFailure ? err.message : `the host failed: ${errorMessage(err)}`;
      if (res.headersSent) res.destroy();
      else json(res, status, { error: message });
    });
  });
}

/** The run's events after `after` as NDJSON, then live until the run ends or the caller leaves. */
function stream(res: http.ServerResponse, run: HostRun, after: number): void {
  if (!run.retains(after)) throw new HttpFailure(410, `the run's output after event ${after} is no longer retained`);
  const consumer: Consumer = {
    id: randomBytes(12).toString("hex"),
    write: (event: RunEvent) => void res.write(`${JSON.stringify(event)}\n`),
    end: () => res.end(),
  };
  res.writeHead(200, {
    "content-type": "application/x-ndjson",
    "cache-control": "no-store",
    [ATTACHMENT_HEADER]: consumer.id,
  });
  res.flushHeaders();
  run.attach(after, consumer);
  // A caller that gave up while the run was being set up has closed already: no event comes for it.
  if (res.destroyed || !res.socket || res.socket.destroyed) run.detach(consumer.id);
  else res.once("close", () => run.detach(consumer.id));
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, "the body is too large");
    chunks.push(chunk);
  }
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new HttpFailure(400, "the body must be a JSON object");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
