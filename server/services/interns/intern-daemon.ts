import type { HandlerContext } from "@connectrpc/connect";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { HostCallError } from "./intern-host-client.js";
import type { InternHostAccess } from "./intern-hosts.js";
import { requireVisibleIntern } from "./intern-scope.js";
import { failureMessage, type InternRow } from "./intern-store.js";
import { recordDaemonReveal } from "./intern-store-hosts.js";

/**
 * `GET /interns/{id}/daemon` (docs/api/interns.md): the origin and token of a visible, running intern's
 * host. The token is a credential: the answer is never cached (`Cache-Control: no-store`), never
 * logged, and each reveal is recorded (caller key hash, intern, time; never the token) before the
 * token leaves. Reasons: 404 `not_found`, 409 `intern_not_running`, 408 `timeout` once the host
 * has not answered within GATEWAY_INTERN_DAEMON_TIMEOUT_MS (10 s), 500 `internal_error`.
 */
export async function revealDaemon(
  deps: Deps,
  caller: Caller,
  internId: string,
  ctx: HandlerContext,
): Promise<InternHostAccess> {
  const intern = await requireVisibleIntern(deps.sequelize, caller, internId);
  if (intern.status !== "running") throw notRunning(intern);
  const access = await hostAccess(deps, intern, ctx.signal);
  if (!access) throw notRunning(intern);
  await recordDaemonReveal(deps.sequelize, {
    organizationId: intern.organizationId,
    workspaceId: intern.workspaceId,
    internId: intern.id,
    keyHash: caller.key.hash,
  });
  ctx.responseHeader.set("cache-control", "no-store");
  return access;
}

function notRunning(intern: InternRow) {
  return gatewayError(409, `Intern ${intern.id} is not running (status ${intern.status}); provision it first`, {
    reason: "intern_not_running",
    retryable: false,
  });
}

/** Asks the host, bounded by the daemon timeout even should the host ignore the abort. */
async function hostAccess(
  deps: Deps,
  intern: InternRow,
  callSignal: AbortSignal,
): Promise<InternHostAccess | undefined> {
  const limit = AbortSignal.timeout(deps.config.internDaemonTimeoutMs);
  const signal = AbortSignal.any([limit, callSignal]);
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([deps.internHosts.access(intern.id, signal), aborted]);
  } catch (err) {
    if (limit.aborted || (err instanceof HostCallError && err.kind === "timeout")) {
      throw gatewayError(408, `The host of intern ${intern.id} did not answer in time`, {
        reason: "timeout",
        retryable: true,
      });
    }
    if (callSignal.aborted) throw gatewayError(499, "The request was cancelled");
    deps.log.warn({ intern: intern.id, err: failureMessage(err) }, "intern daemon access failed");
    throw gatewayError(500, `The host of intern ${intern.id} could not be reached`, {
      reason: "internal_error",
      retryable: true,
    });
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
