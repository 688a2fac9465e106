import { setTimeout as sleep } from "node:timers/promises";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../../gen/grpc/health/v1/health_pb.js";
import { gatewayError } from "../../../wire/errors.js";

/**
 * gRPC's standard health protocol (grpc.health.v1.Health) on the core's ports, for Kubernetes gRPC
 * probes, grpc_health_probe, Envoy and gRPC's client-side health checking. Every service reports
 * the readiness of the instance as a whole: they share one process, one database and one drain.
 */
export interface ServingState {
  /** Whether this instance should be sent traffic now (the same answer as `GET /readyz`). */
  ready(): Promise<boolean>;
  /** Whether the drain has begun: from then on the instance is never ready again. */
  draining(): boolean;
}

/** How often an open Watch looks at the readiness again (a change is reported at most this late). */
export const WATCH_POLL_MS = 1_000;

/** The protocol's own cap on List (grpc/health/v1/health.proto). */
const LIST_LIMIT = 100;

/**
 * `serviceNames` are the fully-qualified names the server answers for besides "" (the server as a
 * whole); any other name is NOT_FOUND for Check and SERVICE_UNKNOWN for Watch.
 */
export function healthService(
  state: ServingState,
  serviceNames: readonly string[],
  pollMs = WATCH_POLL_MS,
): ServiceImpl<typeof Health> {
  const known = new Set(["", ...serviceNames]);
  const overall = async (): Promise<ServingStatus> =>
    (await state.ready()) ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  const statusOf = (service: string): Promise<ServingStatus> =>
    known.has(service) ? overall() : Promise.resolve(ServingStatus.SERVICE_UNKNOWN);

  return {
    async check({ service }) {
      if (!known.has(service)) throw gatewayError(404, `unknown service "${service}"`);
      return { status: await overall() };
    },

    async list() {
      if (known.size > LIST_LIMIT) throw gatewayError(429, `more than ${LIST_LIMIT} services`);
      const status = await overall();
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status }])) };
    },

    async *watch({ service }, ctx) {
      let last: ServingStatus | undefined;
      for (;;) {
        const status = await statusOf(service);
        if (status !== last) yield { status };
        last = status;
        // Once the drain has begun the answer is final: ending the stream (OK, the client retries
        // elsewhere) keeps an idle watcher from holding the drain up for the whole grace period.
        if (state.draining()) return;
        const cancelled = await sleep(pollMs, false, { signal: ctx.signal }).catch(() => true);
        if (cancelled) return;
      }
    },
  };
}
