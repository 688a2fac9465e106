import { createHmac } from "node:crypto";
import { QueryTypes } from "sequelize";
import { suite } from "../../../support/suite.js";
import * as assert from "uvu/assert";
import { openValue, type VaultKey } from "../../../../server/services/interns/vault/vault-keys.js";
import { secretsForUrl } from "../../../../server/services/interns/vault/vault-release.js";
import { importLegacySecret, vaultKey } from "../../../../server/services/interns/vault/vault-store.js";
import { eventually } from "../../../support/eventually.js";
import { at, call, type Reply } from "../../../support/http.js";
import {
  createdIntern,
  runningIntern,
  startInternsGateway,
  type InternsEnv,
  type Json,
} from "../../../support/interns.js";

/** Encryption at rest, fingerprints and legacy rows (docs/api/vault.md). */
const test = suite<{ env: InternsEnv }>("vault storage");
test.before(async (ctx) => {
  ctx.env = await startInternsGateway();
});
test.after(async ({ env }) => {
  await env.stop();
});

const internSecrets = (internId: string) => `/api/v1/vault/interns/${internId}/secrets`;
const put = (env: InternsEnv, route: string, name: string, hosts: string[], value: string) =>
  call(env.gw.url, "PUT", `${route}/${name}`, { key: env.main.key, body: { hosts, value } });
const fingerprint = (res: Reply) => at(res.body, "data", "fingerprint") as string;

interface StoredRow {
  vault_id: string;
  name: string;
  legacy: boolean;
  hosts: string[] | null;
  fingerprint: string | null;
  sealed_value: Buffer;
}

async function rows(env: InternsEnv, name: string): Promise<StoredRow[]> {
  return env.gw.gateway.sequelize.query("SELECT * FROM vault_secrets WHERE name = :name ORDER BY legacy", {
    type: QueryTypes.SELECT,
    replacements: { name },
  });
}

async function workspaceVault(env: InternsEnv): Promise<string> {
  const [row] = await env.gw.gateway.sequelize.query<{ id: string }>(
    "SELECT id FROM vaults WHERE workspace_id = :workspaceId AND intern_id IS NULL",
    {
      type: QueryTypes.SELECT,
      replacements: { workspaceId: env.main.workspaceId },
    },
  );
  return row!.id;
}

/** SQL flipping the lowest bit of one ciphertext byte (0-based `index`, past the 28 bytes of nonce and tag). */
const flipByte = (column: string, index: number) => `set_byte(${column}, ${index}, get_byte(${column}, ${index}) # 1)`;

async function keyOf(env: InternsEnv, vaultId: string): Promise<VaultKey> {
  const key = await vaultKey(env.gw.gateway.sequelize, env.gw.gateway.deps.secrets.masterKey, vaultId);
  if (!key) throw new Error(`vault ${vaultId} does not exist`);
  return key;
}

test("values are stored encrypted: no trace of the value in the database, and only the vault key opens them", async ({
  env,
}) => {
  const intern = await createdIntern(env, { name: "at-rest" });
  const value = "sk-live-0123456789abcdefghij";
  assert.is((await put(env, internSecrets(intern.id as string), "at_rest", ["api.example.com"], value)).status, 200);
  const [row] = await rows(env, "at_rest");
  const dump = JSON.stringify(row) + row!.sealed_value.toString("latin1");
  for (const form of [value, Buffer.from(value).toString("hex"), Buffer.from(value).toString("base64")])
    assert.not.ok(dump.includes(form), form);
  const [vault] = await env.gw.gateway.sequelize.query<{ sealed_data_key: Buffer }>(
    "SELECT sealed_data_key FROM vaults WHERE id = :id",
    {
      type: QueryTypes.SELECT,
      replacements: { id: intern.vault_id },
    },
  );
  assert.is(vault!.sealed_data_key.length, 12 + 16 + 44, "the data key is stored sealed (nonce, tag, ciphertext)");
  const key = await keyOf(env, intern.vault_id as string);
  assert.is(
    openValue(key, "at_rest", row!.sealed_value),
    value,
    "the stored ciphertext is the value under the vault's key",
  );
  assert.throws(
    () => openValue(key, "another_name", row!.sealed_value),
    "bound to its name: it does not open as another secret",
  );
});

test("tampered ciphertext fails closed: nothing is released, copied or leaked", async ({ env }) => {
  const intern = await runningIntern(env, "tampered");
  const id = intern.id as string;
  const value = "tamper-me-please-0001";
  await put(env, "/api/v1/vault/secrets", "tampered_ws", ["api.example.com"], value);
  await put(env, internSecrets(id), "tampered_own", ["own.example.com"], value);
  await env.gw.gateway.sequelize.query(
    `UPDATE vault_secrets SET sealed_value = ${flipByte("sealed_value", 30)} ` +
      "WHERE name IN ('tampered_ws', 'tampered_own')",
  );
  const copy = await call(env.gw.url, "POST", `${internSecrets(id)}/copy`, {
    key: env.main.key,
    body: { names: ["tampered_ws"] },
  });
  assert.is(copy.status, 500, copy.text);
  assert.not.ok(copy.text.includes(value));
  const listed = await call(env.gw.url, "GET", internSecrets(id), { key: env.main.key });
  assert.not.ok(
    (at(listed.body, "data") as Json[]).some((s) => s.name === "tampered_ws"),
    "nothing was copied",
  );
  let released: unknown;
  try {
    released = await secretsForUrl(env.gw.gateway.deps, id, "https://own.example.com/");
  } catch (err) {
    released = err;
  }
  assert.ok(released instanceof Error, "release throws rather than hand out anything");
  assert.not.ok(String(released).includes(value));

  // A tampered data key opens nothing of its vault either.
  await put(env, internSecrets(id), "tampered_own", ["own.example.com"], value);
  assert.equal(
    await secretsForUrl(env.gw.gateway.deps, id, "https://own.example.com/"),
    [{ name: "tampered_own", value }],
    "a rewrite heals it",
  );
  await env.gw.gateway.sequelize.query(
    `UPDATE vaults SET sealed_data_key = ${flipByte("sealed_data_key", 40)} WHERE id = :id`,
    { replacements: { id: intern.vault_id } },
  );
  const broken = await secretsForUrl(env.gw.gateway.deps, id, "https://own.example.com/").then(
    () => "released",
    () => "refused",
  );
  assert.is(broken, "refused");
  assert.is(
    (await call(env.gw.url, "DELETE", "/api/v1/vault/secrets/tampered_ws", { key: env.main.key })).status,
    204,
    "a tampered secret can still be deleted",
  );
});

test(
  "fingerprints: sha256:<HMAC of the value under the vault's key>; " +
    "equal in a vault, different across vaults, stable on rewrite",
  async ({ env }) => {
    const first = await createdIntern(env, { name: "fp-one" });
    const second = await createdIntern(env, { name: "fp-two" });
    const one = internSecrets(first.id as string);
    const a = fingerprint(await put(env, one, "fp_a", ["api.example.com"], "same-value"));
    const b = fingerprint(await put(env, one, "fp_b", ["other.example.com"], "same-value"));
    const c = fingerprint(await put(env, one, "fp_c", ["api.example.com"], "other-value"));
    const rewritten = fingerprint(await put(env, one, "fp_a", ["api.example.com", "x.example.com"], "same-value"));
    const elsewhere = fingerprint(
      await put(env, internSecrets(second.id as string), "fp_a", ["api.example.com"], "same-value"),
    );
    const workspace = fingerprint(await put(env, "/api/v1/vault/secrets", "fp_a", ["api.example.com"], "same-value"));
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
    assert.is(a, b, "equal values, equal fingerprints within one vault");
    assert.is.not(a, c, "different values differ");
    assert.is(rewritten, a, "rewriting the same value keeps the fingerprint");
    assert.is.not(elsewhere, a, "another intern's vault fingerprints differently");
    assert.is.not(workspace, a, "so does the workspace vault");
    const key = await keyOf(env, first.vault_id as string);
    assert.is(a, `sha256:${createHmac("sha256", key.dataKey).update("same-value").digest("hex")}`);
    assert.is.not(a, `sha256:${createHmac("sha256", "").update("same-value").digest("hex")}`);
  },
);

test(
  "legacy rows: listed with null hosts and fingerprint, " + "cannot be deleted or copied, replaced by storing the name",
  async ({ env }) => {
    const intern = await runningIntern(env, "legacy-holder");
    const id = intern.id as string;
    const { sequelize } = env.gw.gateway;
    await importLegacySecret(sequelize, await keyOf(env, intern.vault_id as string), "legacy_token", "old-value");
    await put(env, "/api/v1/vault/secrets", "ws_current", ["legacy.example.com"], "current");
    await importLegacySecret(sequelize, await keyOf(env, await workspaceVault(env)), "ws_legacy", "old-ws-value");

    const listed = await call(env.gw.url, "GET", internSecrets(id), { key: env.main.key });
    const legacy = (at(listed.body, "data") as Json[]).find((s) => s.name === "legacy_token")!;
    assert.equal(
      { hosts: legacy.hosts, fingerprint: legacy.fingerprint, allow_http: legacy.allow_http },
      { hosts: null, fingerprint: null, allow_http: false },
    );
    assert.equal(Object.keys(legacy).sort(), ["allow_http", "created_at", "fingerprint", "hosts", "name"]);
    const effective = await call(env.gw.url, "GET", `/api/v1/vault/interns/${id}/effective-secrets`, {
      key: env.main.key,
    });
    assert.equal((at(effective.body, "data") as Json[]).find((s) => s.name === "legacy_token")?.hosts, null);
    assert.equal(
      await secretsForUrl(env.gw.gateway.deps, id, "https://legacy.example.com/"),
      [{ name: "ws_current", value: "current" }],
      "a legacy row is released to no host",
    );

    const del = await call(env.gw.url, "DELETE", `${internSecrets(id)}/legacy_token`, { key: env.main.key });
    assert.is(del.status, 409, del.text);
    assert.is((await call(env.gw.url, "DELETE", "/api/v1/vault/secrets/ws_legacy", { key: env.main.key })).status, 409);
    const copy = await call(env.gw.url, "POST", `${internSecrets(id)}/copy`, {
      key: env.main.key,
      body: { names: ["ws_current", "ws_legacy"] },
    });
    assert.is(copy.status, 409, copy.text);
    assert.match(at(copy.body, "error", "message") as string, /ws_legacy/);
    const afterCopy = await call(env.gw.url, "GET", internSecrets(id), { key: env.main.key });
    assert.not.ok(
      (at(afterCopy.body, "data") as Json[]).some((s) => s.name === "ws_current"),
      "nothing was copied",
    );

    const stored = await put(env, internSecrets(id), "legacy_token", ["legacy.example.com"], "new-value");
    assert.is(stored.status, 200, stored.text);
    assert.equal(
      (await rows(env, "legacy_token")).map((row) => row.legacy),
      [false],
      "storing the name replaces the legacy row",
    );
    assert.equal(at(stored.body, "data", "hosts"), ["legacy.example.com"]);

    // A legacy row imported beside a current one: the current one is listed, and deleting it leaves the legacy one.
    await importLegacySecret(sequelize, await keyOf(env, intern.vault_id as string), "legacy_token", "older-value");
    assert.equal(
      (await rows(env, "legacy_token")).map((row) => row.legacy),
      [false, true],
    );
    const both = await call(env.gw.url, "GET", internSecrets(id), { key: env.main.key });
    const shown = (at(both.body, "data") as Json[]).filter((s) => s.name === "legacy_token");
    assert.is(shown.length, 1, "one entry per name");
    assert.equal(shown[0]!.hosts, ["legacy.example.com"], "the current secret is listed");
    assert.equal(await secretsForUrl(env.gw.gateway.deps, id, "https://legacy.example.com/"), [
      { name: "legacy_token", value: "new-value" },
      { name: "ws_current", value: "current" },
    ]);
    assert.is(
      (await call(env.gw.url, "DELETE", `${internSecrets(id)}/legacy_token`, { key: env.main.key })).status,
      204,
    );
    assert.is(
      (await call(env.gw.url, "DELETE", `${internSecrets(id)}/legacy_token`, { key: env.main.key })).status,
      409,
      "what is left is legacy",
    );
  },
);

/**
 * Until a statement of this suite's database waits for a lock, i.e. a request is blocked behind a
 * test's open transaction.
 */
async function untilALockIsAwaited(env: InternsEnv): Promise<void> {
  const waiting = async (): Promise<number> => {
    const [row] = await env.gw.gateway.sequelize.query<{ waiting: number }>(
      "SELECT count(*)::int AS waiting FROM pg_stat_activity " +
        "WHERE datname = current_database() AND wait_event_type = 'Lock'",
      {
        type: QueryTypes.SELECT,
      },
    );
    return row!.waiting;
  };
  await eventually(waiting, "a statement waits for the lock");
}

test("a secret stored while its intern is being deleted: 404 not_found, nothing written", async ({ env }) => {
  const intern = await createdIntern(env, { name: "deleted-under-a-put" });
  const id = intern.id as string;
  const { sequelize } = env.gw.gateway;
  // The intern's delete, not yet committed: the PUT still finds the intern, then meets its vault being deleted.
  const deletion = await sequelize.transaction();
  await sequelize.query("DELETE FROM interns WHERE id = :id", { replacements: { id }, transaction: deletion });
  const stored = put(env, internSecrets(id), "late_token", ["api.example.com"], "late-value");
  await untilALockIsAwaited(env);
  await deletion.commit();
  const res = await stored;
  assert.is(res.status, 404, res.text);
  assert.is(at(res.body, "error", "metadata", "reason"), "not_found");
  assert.equal(await rows(env, "late_token"), [], "nothing was written");
});

test.run();
