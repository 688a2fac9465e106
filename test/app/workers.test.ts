import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { QueryTypes, Sequelize } from "sequelize";
import * as assert from "uvu/assert";
import { processRuns } from "../../server/platform/workers/process-runs.js";
import { FAILED_STARTS_ALLOWED, RestartPolicy } from "../../server/app/cluster-restarts.js";
import { CALL_USD, EPSILON, ONE_CALL, centralSpend, newKey } from "../engine/admission/support.js";
import { eventually } from "../support/eventually.js";
import { startGatewayProcess, type GatewayProcess } from "../support/gateway-process.js";
import { call, type Reply } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";
import type { LogLine } from "../support/log-lines.js";
import { suite } from "../support/suite.js";

/**
 * GATEWAY_WORKERS (cmd/gateway.ts, server/app/cluster-primary.ts): a primary that does the
 * start's one-time work (the embedded PostgreSQL, migrations, the generated key) and forks gateway
 * workers sharing the two ports. Calls reach every worker, each worker's lines name it, /metrics
 * answers the sum over the workers, a key's limit holds across them, a killed worker is replaced
 * while the others answer and the ledger lacks at most its queued window, SIGTERM drains every
 * worker and exits 0; workers that cannot start end the start.
 */
const READY = "all workers listening";
/** Each worker's settlement queue holds at most this many calls: what a `kill -9` may lose (docs/architecture.md). */
const CAPACITY = 64;
const CHAT_PATH = "/api/v1/chat/completions";

/**
 * A call on a connection of its own: the primary hands each new connection to the next worker,
 * and a kept-alive one would stay with the worker it first reached.
 */
function fresh(base: string, method: string, route: string, options: { key: string; body?: unknown }): Promise<Reply> {
  return call(base, method, route, { ...options, headers: { connection: "close" } });
}

function chat(base: string, key: string, content = "Hi there"): Promise<Reply> {
  return fresh(base, "POST", CHAT_PATH, { key, body: { ...ONE_CALL, messages: [{ role: "user", content }] } });
}

function logLines(gateway: GatewayProcess): LogLine[] {
  return gateway.lines.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** Every worker that has listened, in order (replacements too). */
function workerPids(gateway: GatewayProcess): number[] {
  return logLines(gateway)
    .filter((line) => line.msg === "gateway listening")
    .map((line) => Number(line.pid));
}

function accessLines(gateway: GatewayProcess): LogLine[] {
  return logLines(gateway).filter((line) => line.msg === "request");
}

/** The workers that answered these replies, from their access lines (matched by request id). */
function pidsOf(gateway: GatewayProcess, replies: readonly Reply[]): Set<number> {
  const ids = new Set(replies.map((reply) => reply.headers.get("x-request-id")));
  return new Set(
    accessLines(gateway)
      .filter((line) => ids.has(String(line.requestId)))
      .map((line) => Number(line.pid)),
  );
}

/** Bursts of concurrent calls until both workers have answered some. */
async function servedByBoth(gateway: GatewayProcess, send: () => Promise<Reply>): Promise<Reply[]> {
  const replies: Reply[] = [];
  await eventually(
    async () => {
      replies.push(...(await Promise.all(Array.from({ length: 4 }, send))));
      return pidsOf(gateway, replies);
    },
    "calls answered by both workers",
    { until: (pids) => pids.size === 2 },
  );
  return replies;
}

/** The sum of `gateway_requests_total` over the series of one route and status. */
function requestsTotal(exposition: string, route: string, status: number): number {
  return exposition
    .split("\n")
    .filter(
      (line) =>
        line.startsWith("gateway_requests_total{") &&
        line.includes(`route="${route}"`) &&
        line.includes(`status="${status}"`),
    )
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}

function sortedNumbers(values: Iterable<number>): number[] {
  return [...values].sort((a, b) => a - b);
}

/** The primary's last line: once it is read, so is every line its workers wrote before they exited. */
function primaryStopped(gateway: GatewayProcess): Promise<boolean> {
  return eventually(
    () => logLines(gateway).some((line) => line.msg === "stopped" && line.worker === undefined),
    "the primary's last line",
  );
}

/** Whether something accepts connections on this local port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

interface Workers {
  env: InferenceGateway;
  dataDir: string;
  gateway: GatewayProcess;
  /** The management key the primary generated. */
  key: string;
  /** The embedded PostgreSQL's port, and a connection to it. */
  pgPort: number;
  db: Sequelize;
  /** Chat calls this gateway has answered 200 so far. */
  answered: number;
}

const test = suite<Workers>("GATEWAY_WORKERS=2: a primary and two gateway workers");
test.before(async (ctx) => {
  ctx.answered = 0;
  ctx.env = await startInferenceGateway();
  ctx.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-workers-"));
  // No DATABASE_URL and no bootstrap key: the primary starts the embedded PostgreSQL and generates the key.
  ctx.gateway = await startGatewayProcess({
    databaseUrl: "",
    key: "",
    ready: READY,
    env: {
      GATEWAY_WORKERS: "2",
      GATEWAY_DATA_DIR: ctx.dataDir,
      GATEWAY_CONFIG: ctx.env.configFile,
      MOCK_UPSTREAM_KEY: ctx.env.upstream.apiKey,
      GATEWAY_SETTLEMENT_CAPACITY: String(CAPACITY),
    },
  });
  // Written right after the ready line, which ended the wait for the start.
  ctx.key = await eventually(
    () => ctx.gateway.lines.map((line) => /^\s+(sk-gw-\S+)$/.exec(line)?.[1]).find(Boolean),
    "the generated key is shown",
  );
  ctx.pgPort = Number(logLines(ctx.gateway).find((line) => line.msg === "embedded postgres ready")?.port);
  // The embedded database's own user and database, with the password it keeps in the data directory
  // (server/platform/db/embedded-postgres.ts).
  const password = (await fs.readFile(path.join(ctx.dataDir, "postgres.password"), "utf8")).trim();
  ctx.db = new Sequelize(`postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${ctx.pgPort}/gateway`, {
    logging: false,
    pool: { max: 2 },
  });
});
test.after(async (ctx) => {
  // Closed already when the SIGTERM test ran.
  await ctx.db?.close().catch(() => undefined);
  await ctx.gateway?.stop();
  await ctx.env?.stop();
  if (ctx.dataDir) await fs.rm(ctx.dataDir, { recursive: true, force: true });
});
test.before.each(({ env }) => {
  env.upstream.reset();
  env.upstream.rule({ usage: { prompt_tokens: 7, completion_tokens: 3 }, delayMs: 2 });
});

test(
  "the primary does the start's one-time work: " +
    "one embedded PostgreSQL, one migration run, the generated key shown once every worker listens",
  ({ gateway, key }) => {
    const lines = logLines(gateway);
    const once = (msg: string) => lines.filter((line) => line.msg === msg);
    assert.is(once("embedded postgres ready").length, 1);
    assert.is(once("applied migrations").length, 1);
    for (const line of [...once("embedded postgres ready"), ...once("applied migrations")])
      assert.is(line.worker, undefined, "the primary did it");
    const banners = gateway.lines.flatMap((line, i) => (line.includes("Management API key (shown once") ? [i] : []));
    assert.is(banners.length, 1, gateway.lines.join("\n"));
    assert.ok(gateway.lines.findIndex((line) => line.includes(READY)) < banners[0]!, "shown once every worker listens");
    assert.ok(gateway.lines.indexOf(`  ${key}`) > banners[0]!, "the key follows its banner");
  },
);

test("calls are served by both workers, and each worker's lines name it", async (ctx) => {
  const { gateway } = ctx;
  const { key } = await newKey(gateway.url, ctx.key);
  const replies = await servedByBoth(gateway, () => chat(gateway.url, key));
  for (const reply of replies) assert.is(reply.status, 200, reply.text);
  ctx.answered += replies.length;
  const workers = workerPids(gateway);
  assert.is(workers.length, 2, gateway.lines.join("\n"));
  assert.equal(sortedNumbers(pidsOf(gateway, replies)), sortedNumbers(workers));
  for (const line of accessLines(gateway)) {
    assert.ok(
      workers.includes(Number(line.pid)) && typeof line.worker === "number",
      `an access line without its worker: ${JSON.stringify(line)}`,
    );
  }
});

test("/metrics answers the sum over the workers, whichever worker a scrape reaches", async (ctx) => {
  const { gateway } = ctx;
  const { key } = await newKey(gateway.url, ctx.key);
  const replies = await servedByBoth(gateway, () => chat(gateway.url, key));
  ctx.answered += replies.filter((reply) => reply.status === 200).length;
  const scrapes = await Promise.all(
    Array.from({ length: 4 }, () => fresh(gateway.url, "GET", "/metrics", { key: "" })),
  );
  for (const scrape of scrapes) {
    assert.is(scrape.status, 200, scrape.text);
    assert.is(requestsTotal(scrape.text, CHAT_PATH, 200), ctx.answered, "chat calls answered 200, by both workers");
  }
});

test("a key's credit limit holds across the workers", async (ctx) => {
  const { gateway, db } = ctx;
  const limit = 10 * CALL_USD;
  const { key, hash } = await newKey(gateway.url, ctx.key, { limit });
  const replies = await Promise.all(Array.from({ length: 50 }, () => chat(gateway.url, key)));
  const ok = replies.filter((reply) => reply.status === 200).length;
  ctx.answered += ok;
  for (const refused of replies.filter((reply) => reply.status !== 200)) assert.is(refused.status, 402, refused.text);
  assert.ok(ok >= 1 && ok <= 10, `${ok} calls admitted against a limit of 10 calls`);
  await eventually(() => pidsOf(gateway, replies), "both workers took calls of the key", {
    until: (pids) => pids.size === 2,
  });
  const central = await eventually(() => centralSpend(db, hash), "every answered call settles", {
    until: (c) => c.ledgerRows === ok,
  });
  assert.ok(Math.abs(central.spent - ok * CALL_USD) < EPSILON, `spent ${central.spent}`);
  assert.ok(
    central.spent + central.leased <= limit + EPSILON,
    `spent ${central.spent} + leased ${central.leased} within ${limit}`,
  );
});

test(
  "kill -9 of a worker: " + "logged and replaced, calls go on being answered, the ledger lacks at most its queue",
  async (ctx) => {
    const { gateway, db } = ctx;
    const limit = 400 * CALL_USD;
    const { key, hash } = await newKey(gateway.url, ctx.key, { limit });
    const tag = "worker-kill";
    const [victim, survivor] = workerPids(gateway) as [number, number];
    const replies: Reply[] = [];
    /** The calls sent once the victim was dead. */
    const sinceKill: Reply[] = [];
    const answered = () => replies.filter((reply) => reply.status === 200);
    let killed = false;
    let done = false;
    // Not awaited: a connection the primary handed to the victim as it died is never answered (node:cluster
    // gives it to no other worker), and such a call ends only when the gateway stops.
    void Promise.all(
      Array.from({ length: 6 }, async () => {
        while (!done) {
          const afterKill = killed;
          // A call in flight on the victim loses its connection: not an answer, and the load goes on.
          const reply = await chat(gateway.url, key, tag).catch(() => undefined);
          if (reply) replies.push(reply);
          if (reply && afterKill) sinceKill.push(reply);
        }
      }),
    );
    try {
      await eventually(() => answered().length, "calls answered before the kill", { until: (n) => n >= 30 });
      process.kill(victim, "SIGKILL");
      killed = true;
      await eventually(
        () => sinceKill.filter((reply) => reply.status === 200).length,
        "calls answered after the kill",
        {
          until: (n) => n >= 30,
        },
      );
    } finally {
      done = true;
    }
    const replacement = await eventually(
      () => workerPids(gateway).find((pid) => pid !== victim && pid !== survivor),
      "a replacement worker listens",
    );
    const late = await servedByBoth(gateway, () => chat(gateway.url, key, tag));
    replies.push(...late);
    for (const reply of replies) assert.is(reply.status, 200, reply.text);
    await eventually(() => pidsOf(gateway, sinceKill), "the access lines of the calls answered after the kill", {
      until: (pids) => pids.size > 0,
    });
    assert.not.ok(pidsOf(gateway, sinceKill).has(victim), "the killed worker answered nothing more");
    assert.equal(
      sortedNumbers(pidsOf(gateway, late)),
      sortedNumbers([survivor, replacement]),
      "the survivor and the replacement answer",
    );
    const exit = logLines(gateway).find((line) => line.msg === "a worker exited; starting a replacement");
    assert.is(exit?.pid, victim, gateway.lines.slice(-20).join("\n"));
    assert.is(exit?.signal, "SIGKILL");
    ctx.answered += answered().length;

    const ids = answered().map((reply) => String(reply.headers.get("x-request-id")));
    const written = async () => {
      const rows = await db.query<{ request_id: string }>(
        "SELECT request_id FROM usage_ledger WHERE key_hash = :hash",
        {
          type: QueryTypes.SELECT,
          replacements: { hash },
        },
      );
      return new Set(rows.map((row) => row.request_id));
    };
    const unwritten = await eventually(
      async () => {
        const rows = await written();
        const byLiveWorkers = new Set(
          accessLines(gateway)
            .filter((line) => line.pid !== victim)
            .map((line) => String(line.requestId)),
        );
        return {
          byLiveWorkers: ids.filter((id) => byLiveWorkers.has(id) && !rows.has(id)),
          all: ids.filter((id) => !rows.has(id)),
        };
      },
      "every call a live worker answered is written",
      { until: (missing) => missing.byLiveWorkers.length === 0 },
    );
    assert.ok(
      unwritten.all.length <= CAPACITY,
      `${unwritten.all.length} of ${ids.length} answered calls have no ledger row (bound: ${CAPACITY})`,
    );
    const central = await centralSpend(db, hash);
    assert.ok(
      central.spent + central.leased <= limit + EPSILON,
      `spent ${central.spent} + leased ${central.leased} within ${limit}`,
    );
  },
);

test("workers that cannot start: the primary says so and exits 1, without forking them again", async ({ env }) => {
  const failure = await startGatewayProcess({
    databaseUrl: env.gw.databaseUrl,
    key: env.gw.key,
    ready: READY,
    env: { GATEWAY_WORKERS: "2", GATEWAY_MASTER_KEY: "not-hex" },
  }).then(
    async (gateway) => {
      await gateway.stop();
      return "it started";
    },
    (err: Error) => err.message,
  );
  assert.match(failure, /exited \(code 1,/);
  assert.ok(failure.includes("a worker exited before it listened: the gateway cannot start"), failure);
  const failedWorkers = failure
    .split("\n")
    .filter((line) => line.includes("gateway failed to start") && line.includes("GATEWAY_MASTER_KEY"));
  assert.ok(
    failedWorkers.length >= 1 && failedWorkers.length <= 2,
    `${failedWorkers.length} workers failed: one per worker forked, none again`,
  );
});

test("SIGTERM: every worker drains, PostgreSQL stops, the primary exits 0 and no worker is left", async ({
  gateway,
  db,
  pgPort,
}) => {
  await db.close();
  assert.ok(await listening(pgPort), "PostgreSQL runs");
  const exit = await gateway.stop();
  assert.equal(exit, { code: 0, signal: null }, gateway.lines.slice(-20).join("\n"));
  await primaryStopped(gateway);
  const killed = Number(logLines(gateway).find((line) => line.msg === "a worker exited; starting a replacement")?.pid);
  const workers = workerPids(gateway);
  for (const pid of workers) assert.not.ok(processRuns(pid), `worker ${pid} still runs`);
  for (const pid of workers.filter((pid) => pid !== killed)) {
    assert.ok(
      logLines(gateway).some((line) => line.pid === pid && line.msg === "stopped"),
      `worker ${pid} drained (its own stop ran)`,
    );
  }
  assert.not.ok(
    await listening(pgPort),
    `PostgreSQL stopped; the gateway said:\n${gateway.lines.slice(-10).join("\n")}`,
  );
});

test.run();

const policy = suite("GATEWAY_WORKERS: when the primary replaces a worker that exited");

policy("a worker that had listened is replaced, however often", () => {
  const restarts = new RestartPolicy();
  for (let i = 0; i < 10 * FAILED_STARTS_ALLOWED; i++)
    assert.is(restarts.exited({ listened: true, firstStart: false }), "replace");
});

policy("a worker that exits during the first start ends it", () => {
  assert.is(new RestartPolicy().exited({ listened: false, firstStart: true }), "give up");
});

policy(
  `replacements that keep exiting before they listen: ${FAILED_STARTS_ALLOWED} in a row end it; ` +
    "a worker that listens starts the count again",
  () => {
    const restarts = new RestartPolicy();
    const failed = () => restarts.exited({ listened: false, firstStart: false });
    for (let i = 1; i < FAILED_STARTS_ALLOWED; i++) assert.is(failed(), "replace");
    restarts.listening();
    for (let i = 1; i < FAILED_STARTS_ALLOWED; i++) assert.is(failed(), "replace");
    assert.is(failed(), "give up");
  },
);

policy.run();
