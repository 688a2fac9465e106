import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../../server/platform/db/embedded-postgres.js";
import { createLogger } from "../../../server/platform/logger.js";
import {
  chatItems,
  FAST_ENGINE,
  itemCallsSeen,
  itemsFinishedByPid,
  recordItemFinishers,
  submit,
  waitTerminal,
} from "../../support/batches.js";
import { eventually } from "../../support/eventually.js";
import { freePort, startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at, call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * The batch runner under crashes and concurrency: gateway processes killed with SIGKILL while a batch
 * runs, two processes sharing one queue, and a database restart. Afterwards every item has exactly
 * one result and one ledger row, and the counts add up. The in-process gateway only takes
 * submissions (its runner is off); the child processes run the items.
 */
const test = suite<{ env: InferenceGateway }>("batch runner reliability");
const ENGINE_OFF = { GATEWAY_BATCH_CONCURRENCY: "0" };

test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({ ...FAST_ENGINE, ...ENGINE_OFF });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

function worker(
  env: InferenceGateway,
  databaseUrl = env.gw.databaseUrl,
  extra: Record<string, string> = {},
): Promise<GatewayProcess> {
  return startGatewayProcess({
    databaseUrl,
    key: env.gw.key,
    env: { ...FAST_ENGINE, GATEWAY_CONFIG: env.configFile, MOCK_UPSTREAM_KEY: env.upstream.apiKey, ...extra },
  });
}

async function counts(
  databaseUrl: string,
  batchId: string,
): Promise<{ items: number; done: number; ledger: number; distinctLedger: number }> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ items: number; done: number; ledger: number; distinct_ledger: number }>(
      `SELECT (SELECT count(*)::int FROM batch_items WHERE batch_id = $1) AS items,
              (SELECT count(*)::int FROM batch_items
                WHERE batch_id = $1 AND state = 'done' AND result IS NOT NULL) AS done,
              (SELECT count(*)::int FROM usage_ledger WHERE batch_id = $1) AS ledger,
              (SELECT count(DISTINCT generation_id)::int FROM usage_ledger WHERE batch_id = $1) AS distinct_ledger`,
      [batchId],
    );
    const row = rows[0]!;
    return { items: row.items, done: row.done, ledger: row.ledger, distinctLedger: row.distinct_ledger };
  } finally {
    await client.end();
  }
}

/** Whether the batch ended after `moment` (the database and the test read the same machine's clock). */
async function finalizedAfter(databaseUrl: string, batchId: string, moment: Date): Promise<boolean> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ later: boolean }>(
      "SELECT finalized_at > $2 AS later FROM batches WHERE id = $1",
      [batchId, moment],
    );
    return rows[0]?.later === true;
  } finally {
    await client.end();
  }
}

function assertExactlyOnce(
  done: { body: unknown; text: string },
  total: number,
  tally: Awaited<ReturnType<typeof counts>>,
): void {
  assert.is(at(done.body, "status"), "completed", done.text.slice(0, 500));
  assert.equal(at(done.body, "request_counts"), { completed: total, failed: 0, total });
  const results = at(done.body, "results") as { custom_id: string; response: unknown }[];
  assert.is(results.length, total);
  assert.is(new Set(results.map((r) => r.custom_id)).size, total, "one result per custom id");
  assert.ok(results.every((r) => r.response !== null));
  assert.equal(tally, { items: total, done: total, ledger: total, distinctLedger: total }, "one ledger row per item");
}

test("SIGKILL of the worker at random points while a 2,000-item batch runs loses and duplicates nothing", async ({
  env,
}) => {
  env.upstream.rule({ delayMs: 10 });
  const total = 2000;
  const accepted = await submit(env.gw.url, env.gw.key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(total),
  });
  assert.is(accepted.status, 202, accepted.text);
  const id = String(at(accepted.body, "id"));
  // Killed three times, each at a random point of progress: results in flight, settlements
  // queued and leases held are lost with the process.
  for (const [from, to] of [
    [100, 500],
    [700, 1100],
    [1300, 1700],
  ] as const) {
    const target = from + Math.floor(Math.random() * (to - from));
    const child = await worker(env, env.gw.databaseUrl, { GATEWAY_BATCH_CONCURRENCY: "16" });
    await eventually(() => counts(env.gw.databaseUrl, id), `${target} items are done`, {
      until: (now) => now.done >= target,
    });
    child.child.kill("SIGKILL");
    await child.exited;
  }
  const before = await counts(env.gw.databaseUrl, id);
  assert.ok(before.done < total, "the kills happened while the batch ran");
  const last = await worker(env);
  try {
    const done = await waitTerminal(env.gw.url, env.gw.key, id);
    assertExactlyOnce(done, total, await counts(env.gw.databaseUrl, id));
  } finally {
    await last.stop();
  }
});

test("two gateway processes on one database share a batch and run no item twice to completion", async ({ env }) => {
  const total = 600;
  const [a, b] = await Promise.all([worker(env), worker(env)]);
  try {
    await recordItemFinishers(env.gw.databaseUrl);
    env.upstream.rule({ delayMs: 2 });
    const accepted = await submit(env.gw.url, env.gw.key, {
      endpoint: "/v1/chat/completions",
      model: "mock/chat",
      requests: chatItems(total, "mock/chat", "shared"),
    });
    const id = String(at(accepted.body, "id"));
    const done = await waitTerminal(env.gw.url, env.gw.key, id);
    assertExactlyOnce(done, total, await counts(env.gw.databaseUrl, id));
    const calls = itemCallsSeen(env.upstream);
    assert.is(calls, total, "every item was sent upstream exactly once");
    const finished = await itemsFinishedByPid(env.gw.databaseUrl, id);
    const [byA, byB] = [finished.get(a.child.pid!) ?? 0, finished.get(b.child.pid!) ?? 0];
    assert.ok(byA > 0 && byB > 0, `both processes ran items: ${byA} and ${byB} of ${total}`);
    assert.is(byA + byB, total, "every item was finished by one of the two");
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test("a database restart mid-batch: callers get 503 meanwhile, then the batch completes", async ({ env }) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-restart-"));
  const port = await freePort();
  const log = createLogger("warn");
  let postgres: EmbeddedPostgres | undefined = await startEmbeddedPostgres(dataDir, port, log);
  const child = await worker(env, postgres.url);
  try {
    const total = 300;
    // The first items are answered; the others wait upstream until the database is down, so the
    // batch is mid-run when it goes.
    const answered = 100;
    let databaseDown!: () => void;
    const held = new Promise<void>((resolve) => (databaseDown = resolve));
    env.upstream.rule({ delayMs: 5, times: answered });
    env.upstream.rule({ delayMs: 5, until: held });
    const accepted = await submit(child.url, env.gw.key, {
      endpoint: "/v1/chat/completions",
      model: "mock/chat",
      requests: chatItems(total, "mock/chat", "restart"),
    });
    assert.is(accepted.status, 202, accepted.text);
    const id = String(at(accepted.body, "id"));
    await eventually(() => counts(postgres!.url, id), `${answered} items are done`, {
      until: (now) => now.done >= answered,
    });
    await eventually(() => itemCallsSeen(env.upstream), "more items are under way", {
      until: (calls) => calls > answered,
    });
    const stoppedAt = new Date();
    await postgres.stop();
    postgres = undefined;
    databaseDown();
    const during = await call(child.url, "GET", `/api/v1/batches/${id}`, { key: env.gw.key });
    assert.is(during.status, 503, during.text);
    assert.is(at(during.body, "error", "code"), 503);
    postgres = await startEmbeddedPostgres(dataDir, port, log);
    const done = await waitTerminal(child.url, env.gw.key, id);
    assertExactlyOnce(done, total, await counts(postgres.url, id));
    assert.ok(
      await finalizedAfter(postgres.url, id, stoppedAt),
      "the batch was still running when the database stopped",
    );
  } finally {
    await child.stop();
    await postgres?.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
