import fs from "node:fs";
import path from "node:path";
import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import type { Gateway } from "../../../server/app/app.js";
import { eventually } from "../../support/eventually.js";
import { startGatewayProcess } from "../../support/gateway-process.js";
import { at, call } from "../../support/http.js";
import {
  fetchBytes,
  getVideo,
  runUntil,
  sqlOn,
  startInstance,
  startVideoGateway,
  submitted,
  videoLedger,
  type VideoGateway,
} from "../../support/videos.js";

/**
 * The poller under failure: a provider that is unreachable, busy or breaks a download (backoff,
 * then success), one that lost the job, jobs past their deadline, outputs past their retention,
 * and instances that stop, crash or stall while they hold a job. Afterwards every job is billed
 * exactly once. The in-process gateway's loop is off; other instances run theirs.
 */
const test = suite<{ env: VideoGateway }>("video poller reliability");

test.before(async (ctx) => {
  ctx.env = await startVideoGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const JOB = { model: "mock/video", prompt: "a storm over the sea", duration: 4 };

interface JobState {
  status: string;
  failures: number;
  due_in_s: number;
  lease_owner: string | null;
  lapsed: boolean;
}

async function state(gateway: Gateway, id: string): Promise<JobState> {
  const [row] = await gateway.sequelize.query<JobState>(
    `SELECT status, failures, extract(epoch FROM available_at - now())::float AS due_in_s, lease_owner,
            coalesce(lease_expires_at < now(), true) AS lapsed
       FROM video_jobs WHERE id = :id`,
    { type: QueryTypes.SELECT, replacements: { id } },
  );
  if (!row) throw new Error(`no job ${id}`);
  return row;
}

/** Waits until the job's lease has lapsed (its holder is gone). */
async function leaseLapsed(gateway: Gateway, id: string): Promise<void> {
  await eventually(() => state(gateway, id), `the lease of ${id} lapses`, { until: (job) => job.lapsed });
}

async function billedOnce(gateway: Gateway, id: string): Promise<void> {
  const [job] = await gateway.sequelize.query<{ generation_id: string }>(
    "SELECT generation_id FROM video_jobs WHERE id = :id",
    { type: QueryTypes.SELECT, replacements: { id } },
  );
  const rows = (await videoLedger(gateway)).filter((row) => row.generation_id === job?.generation_id);
  assert.is(rows.length, 1, `job ${id} has ${rows.length} ledger rows`);
}

test(
  "an unreachable provider is polled again after a backoff that doubles, or its Retry-After; " +
    "then the job completes",
  async ({ env }) => {
    const { gw, upstream } = env;
    const slow = await startInstance(env, { GATEWAY_VIDEO_RETRY_BASE_MS: "60000" });
    try {
      const id = await submitted(gw.url, gw.key, JOB);
      upstream.videos.fail("status", 503);
      await slow.videos.runOnce();
      let now = await state(gw.gateway, id);
      assert.is(now.status, "pending", "the job stays as it was");
      assert.is(now.failures, 1);
      assert.ok(now.due_in_s > 50 && now.due_in_s <= 60, `first backoff: the base (${now.due_in_s} s)`);
      assert.is(now.lease_owner, null);

      await sqlOn(gw.gateway, "UPDATE video_jobs SET available_at = now() WHERE id = $id", { id });
      upstream.videos.fail("status", 502);
      await slow.videos.runOnce();
      now = await state(gw.gateway, id);
      assert.is(now.failures, 2);
      assert.ok(now.due_in_s > 110 && now.due_in_s <= 120, `second backoff: doubled (${now.due_in_s} s)`);

      await sqlOn(gw.gateway, "UPDATE video_jobs SET available_at = now() WHERE id = $id", { id });
      upstream.videos.fail("status", 429, { retryAfter: 900 });
      await slow.videos.runOnce();
      now = await state(gw.gateway, id);
      assert.ok(now.due_in_s > 290 && now.due_in_s <= 300, `Retry-After, up to the 5-minute cap (${now.due_in_s} s)`);

      await sqlOn(gw.gateway, "UPDATE video_jobs SET available_at = now() WHERE id = $id", { id });
      await runUntil(gw.gateway, gw.key, id, "completed");
      assert.is((await state(gw.gateway, id)).failures, 0);
      await billedOnce(gw.gateway, id);
    } finally {
      await slow.stop();
    }
  },
);

test("a download that fails or breaks off is tried again; the job completes, billed once", async ({ env }) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  upstream.videos.fail("content", 503);
  upstream.videos.cutDownloads = 1;
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  assert.is(upstream.videos.calls.content, 3);
  const stored = await fetchBytes(gw.url, String(at(done.body, "unsigned_urls", 0)), gw.key);
  assert.ok(
    stored.bytes.equals(upstream.videos.contentOf([...upstream.videos.jobs.keys()][0]!)),
    "the whole video, not the broken half",
  );
  await billedOnce(gw.gateway, id);
});

test("a provider that no longer knows the job fails it with the reason", async ({ env }) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  upstream.videos.fail("status", 404);
  const failed = await runUntil(gw.gateway, gw.key, id, "failed");
  assert.match(String(at(failed.body, "error")), /MockAI rejected the request: mock upstream failure 404/);
  await billedOnce(gw.gateway, id);
});

test("a job past its deadline is expired: provider job deleted, no cost, reservation released", async ({ env }) => {
  const { gw, upstream } = env;
  const limited = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "deadline", limit: 5 } });
  const key = String(at(limited.body, "key"));
  const id = await submitted(gw.url, key, JOB);
  upstream.videos.hold = true;
  await runUntil(gw.gateway, key, id, "in_progress");
  await sqlOn(
    gw.gateway,
    "UPDATE video_jobs SET deadline_at = now() - interval '1 second', " +
      "available_at = now() + interval '1 hour' WHERE id = $id",
    { id },
  );
  const expired = await runUntil(gw.gateway, key, id, "expired");
  assert.match(String(at(expired.body, "error")), /did not finish before its deadline/);
  assert.match(String(at(expired.body, "generation_id")), /^gen-/);
  assert.is(at(expired.body, "usage"), undefined);
  assert.is(upstream.videos.calls.delete, 1);
  assert.ok([...upstream.videos.jobs.values()].every((job) => job.deleted));
  const rows = (await videoLedger(gw.gateway)).filter((row) => row.generation_id === at(expired.body, "generation_id"));
  assert.equal(
    rows.map((row) => [row.status, row.http_status, Number(row.cost_usd)]),
    [["error", 524, 0]],
  );
  const [held] = await gw.gateway.sequelize.query<{ n: number }>("SELECT count(*)::int AS n FROM budget_reservations", {
    type: QueryTypes.SELECT,
  });
  assert.is(held?.n, 0);
  // Further polls change nothing.
  await gw.gateway.videos.runOnce();
  assert.is(at((await getVideo(gw.url, key, id)).body, "status"), "expired");
});

test("after the retention: no expires_at or URLs, content 410, and the sweep deletes the stored copy", async ({
  env,
}) => {
  const { gw } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  const signed = String(at(done.body, "urls", 0));
  const unsigned = String(at(done.body, "unsigned_urls", 0));
  const [job] = await gw.gateway.sequelize.query<{ workspace_id: string }>(
    "SELECT workspace_id FROM video_jobs WHERE id = :id",
    { type: QueryTypes.SELECT, replacements: { id } },
  );
  const file = path.join(env.env.GATEWAY_FILES_DIR!, "videos", job!.workspace_id, id, "0");
  assert.ok(fs.existsSync(file), "the output is stored under the files directory");

  await sqlOn(gw.gateway, "UPDATE video_jobs SET outputs_expire_at = now() - interval '1 second' WHERE id = $id", {
    id,
  });
  const gone = await getVideo(gw.url, gw.key, id);
  assert.is(at(gone.body, "status"), "completed");
  assert.is(at(gone.body, "expires_at"), null);
  assert.is(at(gone.body, "urls"), null);
  assert.equal(at(gone.body, "unsigned_urls"), []);
  assert.ok(at(gone.body, "usage") !== undefined, "usage stays");
  assert.is((await fetchBytes(gw.url, unsigned, gw.key)).status, 410);
  assert.is((await fetchBytes(gw.url, signed)).status, 410);

  await gw.gateway.videos.runOnce();
  assert.not.ok(fs.existsSync(file), "the sweep deleted the stored copy");
  const [row] = await gw.gateway.sequelize.query<{ purged: boolean }>(
    "SELECT outputs_purged_at IS NOT NULL AS purged FROM video_jobs WHERE id = :id",
    {
      type: QueryTypes.SELECT,
      replacements: { id },
    },
  );
  assert.is(row?.purged, true);
  assert.is((await fetchBytes(gw.url, unsigned, gw.key)).status, 410);
});

test("another instance's poller loop finishes a job; a stopping instance hands its job back at once", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  const other = await startInstance(env, { GATEWAY_VIDEO_POLL_MS: "20" });
  let stopped = false;
  try {
    await eventually(() => getVideo(gw.url, gw.key, id), "the other instance completes the job", {
      until: (res) => at(res.body, "status") === "completed",
    });
    await billedOnce(gw.gateway, id);

    // A job the instance is downloading when it stops: handed back, and finished here without waiting for a lease.
    const second = await submitted(gw.url, gw.key, JOB);
    const downloading = upstream.videos.hang("content");
    // Its loop claims the job and gets as far as the download.
    await downloading;
    await other.stop();
    stopped = true;
    upstream.videos.release();
    const now = await state(gw.gateway, second);
    assert.is(now.lease_owner, null, "handed back");
    await gw.gateway.videos.runOnce();
    assert.is(at((await getVideo(gw.url, gw.key, second)).body, "status"), "completed");
    await billedOnce(gw.gateway, second);
  } finally {
    if (!stopped) await other.stop();
  }
});

test("a step that lost its lease to another instance cannot bill the job a second time", async ({ env }) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  await runUntil(gw.gateway, gw.key, id, "in_progress");
  const other = await startInstance(env);
  try {
    // This instance stalls in the download; its lease lapses and the other instance takes the job over.
    const downloading = upstream.videos.hang("content");
    const stalled = gw.gateway.videos.runOnce();
    await downloading;
    await sqlOn(gw.gateway, "UPDATE video_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $id", {
      id,
    });
    await other.videos.runOnce();
    assert.is(at((await getVideo(gw.url, gw.key, id)).body, "status"), "completed");
    upstream.videos.release();
    await stalled;
    await billedOnce(gw.gateway, id);
    const done = await getVideo(gw.url, gw.key, id);
    assert.is(at(done.body, "status"), "completed");
    assert.is((await fetchBytes(gw.url, String(at(done.body, "urls", 0)))).status, 200);
  } finally {
    await other.stop();
  }
});

test("a step longer than the lease keeps its job: the lease is renewed and no other instance takes the job", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  await runUntil(gw.gateway, gw.key, id, "in_progress");
  const holder = await startInstance(env, { GATEWAY_VIDEO_LEASE_MS: "1000" });
  try {
    const downloading = upstream.videos.hang("content");
    const step = holder.videos.runOnce();
    await downloading;
    const expiry = async () => {
      const [row] = await gw.gateway.sequelize.query<{ at: Date; passed: boolean }>(
        "SELECT lease_expires_at AS at, lease_expires_at < now() AS passed FROM video_jobs WHERE id = :id",
        {
          type: QueryTypes.SELECT,
          replacements: { id },
        },
      );
      return row!;
    };
    const first = (await expiry()).at;
    // Past the first lease's end, the job is still held: renewed.
    const passedFirst = async () => {
      const [row] = await gw.gateway.sequelize.query<{ passed: boolean }>("SELECT now() > :first AS passed", {
        type: QueryTypes.SELECT,
        replacements: { first },
      });
      return row!.passed;
    };
    await eventually(passedFirst, "the database clock passes the first lease's end");
    const now = await expiry();
    assert.ok(now.at.getTime() > first.getTime(), "the lease was extended");
    assert.is(now.passed, false);
    assert.is(await gw.gateway.videos.runOnce(), 0, "nobody else claims the job");
    upstream.videos.release();
    await step;
    assert.is(at((await getVideo(gw.url, gw.key, id)).body, "status"), "completed");
    await billedOnce(gw.gateway, id);
  } finally {
    await holder.stop();
  }
});

test("SIGKILL while downloading: the job is taken over once the dead instance's lease lapses", async ({ env }) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  await runUntil(gw.gateway, gw.key, id, "in_progress");
  const downloading = upstream.videos.hang("content");
  const child = await startGatewayProcess({
    databaseUrl: gw.databaseUrl,
    key: gw.key,
    env: { ...env.env, GATEWAY_VIDEO_POLL_MS: "20", GATEWAY_VIDEO_LEASE_MS: "1000" },
  });
  try {
    await downloading;
    child.child.kill("SIGKILL");
    await child.exited;
    upstream.videos.release();
    await leaseLapsed(gw.gateway, id);
    await gw.gateway.videos.runOnce();
    assert.is(at((await getVideo(gw.url, gw.key, id)).body, "status"), "completed");
    await billedOnce(gw.gateway, id);
  } finally {
    await child.stop();
  }
});

test("signed URLs never reach the logs, even at debug level", async ({ env }) => {
  const { gw } = env;
  const id = await submitted(gw.url, gw.key, JOB);
  await runUntil(gw.gateway, gw.key, id, "completed");
  const child = await startGatewayProcess({
    databaseUrl: gw.databaseUrl,
    key: gw.key,
    env: { ...env.env, LOG_LEVEL: "debug" },
  });
  try {
    const job = await getVideo(child.url, gw.key, id);
    const signed = String(at(job.body, "urls", 0));
    const sig = new URL(signed, child.url).searchParams.get("sig")!;
    assert.is((await fetchBytes(child.url, signed)).status, 200);
    assert.is((await fetchBytes(child.url, signed.replace(sig, sig.split("").reverse().join("")))).status, 401);
    await child.stop();
    // Access lines name the route template, never the raw path (server/platform/observability/access-log.ts).
    assert.is(
      child.lines.filter((line) => line.includes('"route":"/api/v1/videos/{job_id}/content"')).length,
      2,
      "the requests were logged",
    );
    assert.not.ok(
      child.lines.some((line) => line.includes(sig) || line.includes("sig=")),
      "no signature in the logs",
    );
  } finally {
    await child.stop();
  }
});

test("SIGKILL during the submission: the job is sent again under the same idempotency key, one provider job", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const child = await startGatewayProcess({
    databaseUrl: gw.databaseUrl,
    key: gw.key,
    env: { ...env.env, GATEWAY_VIDEO_LEASE_MS: "1000", GATEWAY_REQUEST_TIMEOUT_MS: "1000" },
  });
  try {
    const creating = upstream.videos.hang("create");
    const answer = call(child.url, "POST", "/api/v1/videos", { key: gw.key, body: JOB }).catch(() => undefined);
    await creating;
    child.child.kill("SIGKILL");
    await child.exited;
    await answer;
    // The provider did accept it: the held request is answered now, to nobody.
    upstream.videos.release();
    const [orphan] = await gw.gateway.sequelize.query<{ id: string }>(
      "SELECT id FROM video_jobs WHERE upstream_id IS NULL",
      { type: QueryTypes.SELECT },
    );
    assert.ok(orphan, "the job row was written before the provider was called");
    await leaseLapsed(gw.gateway, orphan.id);
    await runUntil(gw.gateway, gw.key, orphan.id, "completed");
    assert.is(upstream.videos.calls.create, 2);
    assert.is(upstream.videos.jobs.size, 1, "the second submission found the first");
    await billedOnce(gw.gateway, orphan.id);
  } finally {
    await child.stop();
  }
});

test.run();
