import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";
import { ownerEmailOf } from "../../config.js";

/**
 * Every organization has an owner member (server/services/members/member-store.ts `createOwner`), and every
 * key belongs to a member (`creator_user_id` is a string, proto/gateway/v1/keys.proto). An organization without an
 * owner gets one: its member whose email is GATEWAY_OWNER_EMAIL (default `owner@localhost`) if it
 * has one, else a new `org:admin` member with that email. Keys without a creator become the
 * owner's. Member ids are `user_` + 26 lowercase hex digits, within the alphabet of newer ones.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(
    `
    ALTER TABLE members ADD COLUMN is_owner boolean NOT NULL DEFAULT false;
    CREATE UNIQUE INDEX members_one_owner ON members (organization_id) WHERE is_owner;

    UPDATE members SET is_owner = true, role = 'org:admin'
     WHERE lower(email) = lower(:email)
       AND NOT EXISTS (SELECT 1 FROM members o WHERE o.organization_id = members.organization_id AND o.is_owner);
    INSERT INTO members (id, organization_id, email, role, is_owner)
    SELECT 'user_' || substr(md5(random()::text || o.id::text), 1, 26), o.id, :email, 'org:admin', true
      FROM organizations o
     WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.organization_id = o.id AND m.is_owner);

    UPDATE api_keys k SET creator_user_id = m.id
      FROM members m
     WHERE k.creator_user_id IS NULL AND m.organization_id = k.organization_id AND m.is_owner;
  `,
    { replacements: { email: ownerEmailOf() } },
  );
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX IF EXISTS members_one_owner;
    ALTER TABLE members DROP COLUMN IF EXISTS is_owner;
  `);
};
