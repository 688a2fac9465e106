import pg from "pg";
import { Sequelize } from "sequelize";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { createReadiness } from "../../server/app/readiness.js";
import { createLogger } from "../../server/platform/logger.js";
import { eventually } from "../support/eventually.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call } from "../support/http.js";

/**
 * GET /healthz and GET /readyz (server/app/health-endpoints.ts, readiness.ts): no key, on the
 * HTTP port of a whole gateway and of a core-only one; readiness fails while the governance change
 * feed is down, when the database does not answer, and once draining has begun.
 */
const test = suite<{ gw: TestGateway }>("health and readiness");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async ({ gw }) => gw.stop());

const ALL_OK = { database: { ok: true }, governance_feed: { ok: true }, draining: { ok: true } };

/** Asks /readyz until it answers `status`: the feed reconnects on its own schedule. */
async function readyzUntil(url: string, status: number): Promise<unknown> {
  return (
    await eventually(() => call(url, "GET", "/readyz"), `/readyz answers ${status}`, {
      until: (res) => res.status === status,
    })
  ).body;
}

test("GET /healthz: 200 {status: ok} without a key, never cached", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/healthz");
  assert.is(res.status, 200);
  assert.equal(res.body, { status: "ok" });
  assert.is(res.headers.get("cache-control"), "no-store");
  assert.is(res.headers.get("content-type"), "application/json");
});

test("GET /readyz: 200 with every check passing, without a key; a query string is ignored", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/readyz?verbose=1");
  assert.is(res.status, 200);
  assert.equal(res.body, { status: "ok", checks: ALL_OK });
});

test("HEAD answers the status without a body; other methods get 405 naming the allowed ones", async ({ gw }) => {
  const head = await fetch(`${gw.url}/readyz`, { method: "HEAD" });
  assert.is(head.status, 200);
  assert.is(await head.text(), "");
  const post = await call(gw.url, "POST", "/healthz", { body: {} });
  assert.is(post.status, 405);
  assert.is(post.headers.get("allow"), "GET, HEAD");
  assert.match(String(at(post.body, "error", "message")), /allowed: GET, HEAD/);
});

test("the governance change feed down: /readyz 503 naming it, and 200 again once it has reconnected", async ({
  gw,
}) => {
  const client = new pg.Client(gw.databaseUrl);
  await client.connect();
  try {
    const { rowCount } = await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity " +
        "WHERE datname = current_database() AND query LIKE 'LISTEN %'",
    );
    assert.ok((rowCount ?? 0) >= 1, "the LISTEN connection was found");
  } finally {
    await client.end();
  }
  const down = await readyzUntil(gw.url, 503);
  assert.is(at(down, "status"), "unavailable");
  assert.is(at(down, "checks", "governance_feed", "ok"), false);
  assert.type(at(down, "checks", "governance_feed", "reason"), "string");
  assert.equal(at(down, "checks", "database"), { ok: true });
  assert.equal(await readyzUntil(gw.url, 200), { status: "ok", checks: ALL_OK });
});

test("a database that cannot be reached: the check fails with a reason that holds no address or SQL", async () => {
  // A real connection attempt to a port nothing listens on (port 1 is reserved, never a PostgreSQL).
  const sequelize = new Sequelize("postgres://gateway:secret-password@127.0.0.1:1/none", {
    logging: false,
    retry: { max: 0 },
  });
  try {
    const readiness = createReadiness({ sequelize, governance: { feedLive: () => true }, log: createLogger("silent") });
    const report = await readiness.check();
    assert.is(report.ready, false);
    assert.equal(report.checks.database, { ok: false, reason: "unreachable" });
    assert.equal(report.checks.governance_feed, { ok: true });
  } finally {
    await sequelize.close();
  }
});

test("draining: /readyz answers 503 from the moment it starts, /healthz still 200; stop() starts it", async () => {
  const gw = await startTestGateway();
  try {
    gw.gateway.readiness.startDraining();
    const res = await call(gw.url, "GET", "/readyz");
    assert.is(res.status, 503);
    assert.equal(at(res.body, "checks", "draining"), { ok: false, reason: "shutting down" });
    assert.is((await call(gw.url, "GET", "/healthz")).status, 200);
  } finally {
    await gw.stop();
  }
  const other = await startTestGateway();
  await other.stop();
  assert.is(other.gateway.readiness.draining(), true);
});

test("--core-only: the HTTP port serves /healthz and /readyz too (no REST facade)", async () => {
  const core = await startTestGateway({}, { coreOnly: true });
  try {
    assert.equal((await call(core.url, "GET", "/healthz")).body, { status: "ok" });
    const ready = await call(core.url, "GET", "/readyz");
    assert.is(ready.status, 200);
    assert.equal(ready.body, { status: "ok", checks: ALL_OK });
  } finally {
    await core.stop();
  }
});

test.run();
