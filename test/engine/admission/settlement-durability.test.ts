import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { QueryTypes, Sequelize } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../../server/platform/db/embedded-postgres.js";
import { createLogger } from "../../../server/platform/logger.js";
import { eventually } from "../../support/eventually.js";
import { freePort, startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { CALL_USD, EPSILON, centralSpend, chat, newKey } from "./support.js";

/**
 * docs/architecture.md, settlement written behind: SIGTERM drains it (every answered call has its row),
 * `kill -9` loses at most the queued window and never budget safety, and while the database is
 * away calls go on only within leases already held, the rest 503, and what was queued is written
 * once it is back.
 */
const CAPACITY = 64;

const test = suite<{ env: InferenceGateway }>("settlement written behind: stops, crashes and outages");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => {
  env.upstream.reset();
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 }, delayMs: 2 });
});

function child(
  env: InferenceGateway,
  databaseUrl = env.gw.databaseUrl,
  extra: Record<string, string> = {},
): Promise<GatewayProcess> {
  return startGatewayProcess({
    databaseUrl,
    key: env.gw.key,
    env: {
      GATEWAY_CONFIG: env.configFile,
      MOCK_UPSTREAM_KEY: env.upstream.apiKey,
      GATEWAY_SETTLEMENT_CAPACITY: String(CAPACITY),
      ...extra,
    },
  });
}

/** How many calls the load has answered when the gateway is stopped or killed: a count, not a time. */
const ANSWERED_BEFORE_STOP = 40;

/**
 * `loops` clients calling back to back; once `ANSWERED_BEFORE_STOP` calls have been answered,
 * `stop` runs (it stops or kills the gateway) while they go on calling, until it is done or the
 * gateway answers anything but 200. Returns the generation ids answered 200.
 */
async function load(
  base: string,
  key: string,
  tag: string,
  loops: number,
  stop: () => Promise<unknown>,
): Promise<string[]> {
  const answered: string[] = [];
  let stopping: Promise<unknown> | undefined;
  let stopped = false;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!stopped) {
        try {
          const res = await chat(base, key, { messages: [{ role: "user", content: tag }] });
          if (res.status !== 200) return;
          answered.push(String(at(res.body, "id")));
        } catch {
          return;
        }
        if (stopping === undefined && answered.length >= ANSWERED_BEFORE_STOP)
          stopping = stop().finally(() => (stopped = true));
      }
    }),
  );
  // Clients refused before the count was reached: the gateway is stopped all the same, and the
  // caller's check of the count says so.
  await (stopping ?? stop());
  return answered;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ledgerIds(sequelize: Sequelize, hash: string): Promise<Set<string>> {
  const rows = await sequelize.query<{ generation_id: string }>(
    "SELECT generation_id FROM usage_ledger WHERE key_hash = :hash AND status = 'success'",
    {
      type: QueryTypes.SELECT,
      replacements: { hash },
    },
  );
  return new Set(rows.map((r) => r.generation_id));
}

function upstreamCalls(env: InferenceGateway, tag: string): number {
  return env.upstream.requests.filter((r) => JSON.stringify(r.body).includes(tag)).length;
}

test("SIGTERM under load: every answered call has its ledger row", async ({ env }) => {
  const gateway = await child(env);
  const { key, hash } = await newKey(gateway.url, env.gw.key);
  let exit: unknown;
  const ids = await load(gateway.url, key, "sigterm-load", 8, async () => (exit = await gateway.stop()));
  await gateway.exited;
  assert.ok(
    ids.length >= ANSWERED_BEFORE_STOP,
    `${ids.length} calls answered; the gateway said:\n${gateway.lines.slice(-15).join("\n")}`,
  );
  const stored = await ledgerIds(env.gw.gateway.sequelize, hash);
  const missing = ids.filter((id) => !stored.has(id));
  assert.equal(
    missing,
    [],
    `no answered call lacks its row; exit ${JSON.stringify(exit)}; the gateway said:\n` +
      `${gateway.lines.slice(-15).join("\n")}`,
  );
  const [left] = await env.gw.gateway.sequelize.query<{ n: string }>(
    "SELECT count(*) AS n FROM admission_leases WHERE quantity LIKE :q",
    {
      type: QueryTypes.SELECT,
      replacements: { q: `%${hash}%` },
    },
  );
  assert.is(left?.n, "0", "a stopping instance gives its leases back");
});

test("kill -9 under load: no budget is exceeded, and the rows lost are at most the queued window", async ({ env }) => {
  const gateway = await child(env);
  const limit = 400 * CALL_USD;
  const { key, hash } = await newKey(gateway.url, env.gw.key, { limit });
  const tag = "kill-load";
  const ids = await load(gateway.url, key, tag, 8, () => {
    gateway.child.kill("SIGKILL");
    return gateway.exited;
  });
  const sent = upstreamCalls(env, tag);
  const central = await centralSpend(env.gw.gateway.sequelize, hash);
  const lost = sent - central.ledgerRows;
  assert.ok(
    ids.length >= ANSWERED_BEFORE_STOP,
    `${ids.length} calls answered; the gateway said:\n${gateway.lines.slice(-15).join("\n")}`,
  );
  assert.ok(lost >= 0 && lost <= CAPACITY, `${lost} of ${sent} upstream calls have no ledger row (bound: ${CAPACITY})`);
  assert.ok(
    central.spent + central.leased <= limit + EPSILON,
    `spent ${central.spent} + leased ${central.leased} within ${limit}`,
  );

  // The dead instance's unused slice stays reserved: the others are admitted only within the rest.
  let admitted = 0;
  for (let i = 0; i < 450; i++) {
    const res = await chat(env.gw.url, key);
    if (res.status !== 200) {
      assert.is(res.status, 402, res.text);
      break;
    }
    admitted++;
  }
  await env.gw.gateway.deps.engine.settlement.barrier();
  const after = await centralSpend(env.gw.gateway.sequelize, hash);
  assert.ok(after.spent <= limit + EPSILON, `spent ${after.spent} within ${limit} after ${admitted} more calls`);
  assert.ok(after.spent + after.leased <= limit + EPSILON);
});

test("database down: leased calls go on, the rest 503; once it is back everything queued is written", async ({
  env,
}) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-outage-"));
  const port = await freePort();
  const log = createLogger("warn");
  let postgres: EmbeddedPostgres | undefined = await startEmbeddedPostgres(dataDir, port, log);
  const gateway = await child(env, postgres.url, { GATEWAY_LEASE_TTL_MS: "60000", GATEWAY_LEASE_IDLE_MS: "600000" });
  const db = new Sequelize(postgres.url, { logging: false, pool: { max: 2 } });
  try {
    const warm = await newKey(gateway.url, env.gw.key, { limit: 1 });
    const cold = await newKey(gateway.url, env.gw.key, { limit: 1 });
    let answered = 0;
    for (let i = 0; i < 3; i++) {
      assert.is((await chat(gateway.url, warm.key)).status, 200);
      answered++;
    }
    await sleep(300);
    await postgres.stop();
    postgres = undefined;

    const refused = await chat(gateway.url, cold.key);
    assert.is(refused.status, 503, refused.text);
    assert.is(at(refused.body, "error", "code"), 503);
    // The warm key's leases cover a few calls more; past them: 503, never admitted without a lease.
    let during = 0;
    for (let i = 0; i < 200; i++) {
      const res = await chat(gateway.url, warm.key);
      if (res.status !== 200) {
        assert.is(res.status, 503, res.text);
        break;
      }
      during++;
    }
    assert.ok(
      during >= 1 && during < 200,
      `${during} calls admitted from held leases during the outage; the gateway said:\n` +
        `${gateway.lines.slice(-10).join("\n")}`,
    );
    answered += during;

    postgres = await startEmbeddedPostgres(dataDir, port, log);
    await eventually(() => chat(gateway.url, cold.key), "admission recovers by itself", {
      until: (r) => r.status === 200,
    });
    answered++;
    const rows = async () =>
      (await centralSpend(db, warm.hash)).ledgerRows + (await centralSpend(db, cold.hash)).ledgerRows;
    await eventually(rows, "every call answered during the outage is written", { until: (n) => n === answered });
    const central = await centralSpend(db, warm.hash);
    assert.ok(Math.abs(central.spent - (answered - 1) * CALL_USD) < EPSILON, `warm key spent ${central.spent}`);
  } finally {
    await db.close();
    await gateway.stop();
    await postgres?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
