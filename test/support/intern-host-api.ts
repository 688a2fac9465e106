import { QueryTypes } from "sequelize";
import { at, call } from "./http.js";
import type { RuntimeEnv } from "./intern-runtime.js";

/**
 * What a terminal client in host mode does with `GET /interns/{id}/daemon` (origin and token): the
 * host's own API (wire/host-protocol.ts). Tests use it to act on a run behind the
 * relay's back, and read the relay's rows to see the state it recorded.
 */
export interface DaemonAccess {
  origin: string;
  token: string;
}

export async function daemonAccess(env: RuntimeEnv, internId: string): Promise<DaemonAccess> {
  const res = await call(env.gw.url, "GET", `/api/v1/interns/${internId}/daemon`, { key: env.key });
  if (res.status !== 200) throw new Error(`GET /daemon answered ${res.status}: ${res.text}`);
  return { origin: at(res.body, "origin") as string, token: at(res.body, "token") as string };
}

export async function hostApi(
  access: DaemonAccess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${access.origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${access.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

export interface HostRunView {
  id: string;
  session_id: string;
  status: string;
  pending: { tool_call_id: string; deadline_at: string } | null;
}

export async function hostRuns(access: DaemonAccess): Promise<HostRunView[]> {
  return (at((await hostApi(access, "GET", "/runs")).body, "data") as HostRunView[]) ?? [];
}

/** Whether a process of this pid still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface RunRowView {
  id: string;
  status: string;
  usage: unknown;
}

export async function runRows(env: RuntimeEnv, sessionId: string): Promise<RunRowView[]> {
  return env.gw.gateway.sequelize.query<RunRowView>(
    "SELECT id, status, usage FROM intern_runs WHERE session_id = :sessionId ORDER BY created_at",
    {
      type: QueryTypes.SELECT,
      replacements: { sessionId },
    },
  );
}
