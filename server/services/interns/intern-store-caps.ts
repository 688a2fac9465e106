import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { InternRuntimeConfig } from "../../../wire/host-protocol.js";
import { gatewayError } from "../../../wire/errors.js";
import type { InternRow, RuntimeLease } from "./intern-store.js";

/**
 * Caps on interns with a live runtime (`provisioning` or `running`): per organization
 * (GATEWAY_INTERN_MAX_RUNNING_PER_ORG) and per gateway instance (GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE:
 * the interns whose runtime lease the instance holds, i.e. whose hosts it runs or is starting).
 * Checked in the transaction that moves an intern to `provisioning`, under a transaction-scoped
 * advisory lock per organization and per instance, so that provisionings racing each other are
 * counted one after the other and no race passes a cap. Past a cap: 429 `intern_limit`, not
 * retryable for the organization's (only a suspend or delete makes room), retryable for the
 * instance's (its interns stop, or another instance takes the request).
 *
 * A take-over of a lost runtime is not capped (intern-supervisor.ts): the intern was counted when
 * it was provisioned, and a cap there would leave it `running` with no host.
 */
export type RunningCaps = Pick<InternRuntimeConfig, "maxRunningPerOrg" | "maxRunningPerInstance">;

const LIVE = ["provisioning", "running"];

export async function requireRoomFor(
  sequelize: Sequelize,
  caps: RunningCaps,
  intern: InternRow,
  lease: RuntimeLease,
  transaction: Transaction,
): Promise<void> {
  const live = async (key: string, where: string, replacements: Record<string, unknown>): Promise<number> => {
    await sequelize.query("SELECT pg_advisory_xact_lock(hashtext(:key))", { replacements: { key }, transaction });
    const [row] = await sequelize.query<{ count: string }>(
      `SELECT count(*) AS count FROM interns WHERE ${where} AND status IN (:live) AND id <> :id`,
      {
        type: QueryTypes.SELECT,
        replacements: { ...replacements, live: LIVE, id: intern.id },
        transaction,
      },
    );
    return Number(row?.count ?? 0);
  };
  if (caps.maxRunningPerOrg > 0) {
    const running = await live(`interns-running:org:${intern.organizationId}`, "organization_id = :organizationId", {
      organizationId: intern.organizationId,
    });
    if (running >= caps.maxRunningPerOrg) {
      throw gatewayError(
        429,
        `The organization's limit of ${caps.maxRunningPerOrg} interns provisioning or running at ` +
          "once is reached (GATEWAY_INTERN_MAX_RUNNING_PER_ORG); suspend or delete one of them first",
        { reason: "intern_limit", retryable: false },
      );
    }
  }
  if (caps.maxRunningPerInstance > 0) {
    const running = await live(`interns-running:instance:${lease.owner}`, "runtime_owner = :owner", {
      owner: lease.owner,
    });
    if (running >= caps.maxRunningPerInstance) {
      throw gatewayError(
        429,
        `This gateway instance runs its limit of ${caps.maxRunningPerInstance} ` +
          "interns at once (GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE); try again later",
        {
          reason: "intern_limit",
          retryable: true,
        },
      );
    }
  }
}
