import type { Sequelize } from "sequelize";
import { gatewayError } from "../../../wire/errors.js";
import { registerEndUser } from "./end-user-store.js";
import { assertTrackingString } from "./tracking-string.js";

/**
 * The `user` of an inference request registers the end user, or touches `updated_at`
 * of one already registered. Registration only: an inactive end user is still served.
 */
export function checkEndUser(user: string | undefined): string | null {
  if (user === undefined) return null;
  if (user === "") throw gatewayError(400, "user must be 1 to 512 characters");
  assertTrackingString(user);
  return user;
}

/**
 * End users this instance registered lately: a user's calls write their registration once per
 * `ttlMs` (which also refreshes `updated_at`), not once per call. Bounded: past `maxEntries` it
 * starts over, which costs only a repeated upsert.
 */
export class EndUserRegistry {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 100_000,
  ) {}

  async register(organizationId: string, user: string): Promise<void> {
    const key = `${organizationId}\u0000${user}`;
    const now = performance.now();
    const at = this.seen.get(key);
    if (at !== undefined && now - at < this.ttlMs) return;
    await registerEndUser(this.sequelize, organizationId, user);
    if (this.seen.size >= this.maxEntries) this.seen.clear();
    this.seen.set(key, now);
  }
}
