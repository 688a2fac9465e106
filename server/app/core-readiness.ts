import { createClient, type Transport } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import type { CheckResult, Readiness } from "./readiness.js";

/** How long the core may take to answer its health check before the facade counts it as away. */
const CORE_TIMEOUT_MS = 1_000;

/**
 * The readiness of a REST facade split from its core (`npm run start:facade`): it can serve when
 * its core says SERVING to `grpc.health.v1.Health/Check`, which reports the core's own readiness
 * (database, change feed, drain), and it is not draining itself.
 */
export function createCoreReadiness(transport: Transport): Readiness {
  const health = createClient(Health, transport);
  let draining = false;

  const core = async (): Promise<CheckResult> => {
    try {
      const { status } = await health.check({ service: "" }, { timeoutMs: CORE_TIMEOUT_MS });
      return status === HealthCheckResponse_ServingStatus.SERVING
        ? { ok: true }
        : { ok: false, reason: "the core is not serving" };
    } catch {
      return { ok: false, reason: `the core did not answer its health check within ${CORE_TIMEOUT_MS} ms` };
    }
  };

  return {
    async check() {
      const checks = { core: await core(), draining: draining ? { ok: false, reason: "shutting down" } : { ok: true } };
      return { ready: checks.core.ok && checks.draining.ok, checks };
    },
    startDraining() {
      draining = true;
    },
    draining: () => draining,
  };
}
