/**
 * Tells an instance that governance data changed, from two sources:
 * - this process's own writes, through Sequelize hooks, after their transaction commits (so the
 *   next request after an admin call that changed a guardrail already sees it);
 * - every instance's writes, on the channel the triggers of migration 0004 notify, through the
 *   instance's notification feed (server/platform/db/notification-feed.ts). While the feed is
 *   down the cache serves what it loaded before, up to its TTL, and stores nothing new (a change
 *   could be missed). Reconnecting counts as a change.
 *
 * @module
 */
import type { Sequelize, Transaction } from "sequelize";
import { GOVERNANCE_TABLES } from "../../platform/db/migrations/0004-governance-notify.js";
import type { NotificationFeed } from "../../platform/db/notification-feed.js";

const CHANNEL = "gateway_governance";
/** Writes to any other table do not concern governance. */
const TABLES = new Set(GOVERNANCE_TABLES);
const WRITE_HOOKS = [
  "afterCreate",
  "afterUpdate",
  "afterDestroy",
  "afterUpsert",
  "afterBulkCreate",
  "afterBulkUpdate",
  "afterBulkDestroy",
] as const;

export function watchGovernanceChanges(sequelize: Sequelize, feed: NotificationFeed, onChange: () => void): void {
  for (const hook of WRITE_HOOKS) {
    sequelize.addHook(
      hook,
      "governance-changes",
      function (this: { getTableName(): string | { tableName: string } }, ...args: unknown[]) {
        const table = this.getTableName();
        if (!TABLES.has(typeof table === "string" ? table : table.tableName)) return;
        const transaction = (args.at(-1) as { transaction?: Transaction | null } | undefined)?.transaction;
        if (transaction) transaction.afterCommit(onChange);
        else onChange();
      },
    );
  }
  feed.subscribe(CHANNEL, onChange);
  // Whatever changed while no one listened.
  feed.onConnected(onChange);
}
