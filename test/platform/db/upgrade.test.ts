import { QueryTypes, Sequelize } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { SequelizeStorage, Umzug } from "umzug";
import { migrations } from "../../../server/platform/db/migrations/index.js";
import { createDatabase } from "../../support/gateway.js";

/**
 * A database written by an older gateway (before the first-run changes), upgraded by the migrations
 * that came later: every workspace gets a default guardrail that restricts nothing (0016), every
 * organization an owner member, and every key without a creator that owner (0017).
 */
const test = suite<{ sequelize: Sequelize }>("upgrade of an existing database");
const BEFORE_ISSUE_17 = "0015-admission-leases";

function migrator(sequelize: Sequelize, upTo?: string): Umzug<ReturnType<Sequelize["getQueryInterface"]>> {
  const last = upTo === undefined ? migrations.length : migrations.findIndex((m) => m.name === upTo) + 1;
  return new Umzug({
    migrations: migrations.slice(0, last),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: "schema_migrations" }),
    logger: undefined,
  });
}

const rows = <T extends object>(sequelize: Sequelize, sql: string, replacements: Record<string, unknown> = {}) =>
  sequelize.query<T>(sql, { type: QueryTypes.SELECT, replacements });

test.before(async (ctx) => {
  ctx.sequelize = new Sequelize(await createDatabase(), { dialect: "postgres", logging: false });
  await migrator(ctx.sequelize, BEFORE_ISSUE_17).up();
  await ctx.sequelize.query(`
    INSERT INTO organizations (id, name) VALUES ('00000000-0000-4000-8000-000000000001', 'Old org');
    INSERT INTO workspaces (id, organization_id, name, slug, created_by)
      VALUES ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000001',
              'Default', 'default', 'bootstrap'),
             ('00000000-0000-4000-8000-0000000000a2', '00000000-0000-4000-8000-000000000001',
              'Guarded', 'guarded', 'bootstrap');
    INSERT INTO guardrails (id, organization_id, workspace_id, name, allowed_models)
      VALUES ('00000000-0000-4000-8000-0000000000b1', '00000000-0000-4000-8000-000000000001',
              '00000000-0000-4000-8000-0000000000a2', 'Strict', ARRAY['a/b']);
    UPDATE workspaces SET default_guardrail_id = '00000000-0000-4000-8000-0000000000b1' WHERE slug = 'guarded';
    INSERT INTO members (id, organization_id, email, role)
      VALUES ('user_bob00000000000000000000000', '00000000-0000-4000-8000-000000000001',
              'bob@example.com', 'org:member');
    INSERT INTO api_keys (hash, organization_id, workspace_id, creator_user_id, name, label, is_management)
      VALUES (repeat('a', 64), '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-0000000000a1',
              NULL, 'bootstrap', 'sk-gw-v1-aaa...aaa', true),
             (repeat('b', 64), '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-0000000000a1',
              'user_bob00000000000000000000000', 'bob', 'sk-gw-v1-bbb...bbb', false);
    INSERT INTO organizations (id, name) VALUES ('00000000-0000-4000-8000-000000000002', 'Has owner@localhost');
    INSERT INTO members (id, organization_id, email, role)
      VALUES ('user_existing00000000000000000', '00000000-0000-4000-8000-000000000002',
              'Owner@Localhost', 'org:member');
  `);
  await migrator(ctx.sequelize).up();
});
test.after(async (ctx) => {
  await ctx.sequelize.close();
});

test("workspaces without a default guardrail get one that restricts nothing; a set default is kept", async ({
  sequelize,
}) => {
  const workspaces = await rows<{ slug: string; default_guardrail_id: string | null }>(
    sequelize,
    "SELECT slug, default_guardrail_id FROM workspaces ORDER BY slug",
  );
  assert.is(workspaces.find((w) => w.slug === "guarded")?.default_guardrail_id, "00000000-0000-4000-8000-0000000000b1");
  const added = workspaces.find((w) => w.slug === "default")!.default_guardrail_id;
  assert.ok(added, "the workspace without one has a default guardrail");
  const [guardrail] = await rows<Record<string, unknown>>(sequelize, "SELECT * FROM guardrails WHERE id = :id", {
    id: added,
  });
  assert.is(guardrail?.workspace_id, "00000000-0000-4000-8000-0000000000a1");
  for (const column of [
    "allowed_models",
    "ignored_models",
    "allowed_providers",
    "ignored_providers",
    "allowed_data_regions",
    "enforce_zdr",
    "limit_micros",
  ]) {
    assert.is(guardrail?.[column], null, column);
  }
  for (const column of ["enable_free_model_training", "enable_paid_model_training", "enable_free_model_publication"])
    assert.is(guardrail?.[column], true, column);
});

test("each organization gets an owner; keys without a creator become the owner's, others keep theirs", async ({
  sequelize,
}) => {
  const owners = await rows<{ id: string; organization_id: string; email: string; role: string }>(
    sequelize,
    "SELECT id, organization_id, email, role FROM members WHERE is_owner ORDER BY organization_id",
  );
  assert.is(owners.length, 2, "one per organization");
  const [created, promoted] = owners;
  assert.match(created!.id, /^user_[a-z0-9]{26}$/);
  assert.is(created!.email, "owner@localhost");
  assert.is(created!.role, "org:admin");
  assert.is(promoted!.id, "user_existing00000000000000000", "a member with the owner email becomes the owner");
  assert.is(promoted!.role, "org:admin");
  const keys = await rows<{ name: string; creator_user_id: string }>(
    sequelize,
    "SELECT name, creator_user_id FROM api_keys ORDER BY name",
  );
  assert.equal(
    keys.map((k) => [k.name, k.creator_user_id]),
    [
      ["bob", "user_bob00000000000000000000000"],
      ["bootstrap", created!.id],
    ],
  );
});

test("default_guardrail_id is NOT NULL from now on", async ({ sequelize }) => {
  const [column] = await rows<{ is_nullable: string }>(
    sequelize,
    "SELECT is_nullable FROM information_schema.columns " +
      "WHERE table_name = 'workspaces' AND column_name = 'default_guardrail_id'",
  );
  assert.is(column?.is_nullable, "NO");
});

test.run();
