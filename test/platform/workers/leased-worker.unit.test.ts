import { spawnSync } from "node:child_process";
import os from "node:os";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startLeasedWorker } from "../../../server/platform/workers/leased-worker.js";
import { isGoneLocalOwner, newLeaseOwner } from "../../../server/platform/workers/lease-owner.js";
import { createLogger } from "../../../server/platform/logger.js";
import { eventually } from "../../support/eventually.js";

/**
 * The one leased worker loop on an in-memory queue, without a database: the rhythm every queue
 * shares (claims bounded by the concurrency, stop aborting and waiting, release of dead owners).
 */
const test = suite("leased worker");
const log = createLogger("silent");

test("claims no more than the free slots, and stop aborts the work in flight and waits for it", async () => {
  const queue = Array.from({ length: 10 }, (_, i) => i);
  const limits: number[] = [];
  let inFlight = 0;
  let most = 0;
  let ended = 0;
  const worker = startLeasedWorker<number>({
    name: "test",
    log,
    concurrency: 3,
    pollMs: 5,
    claim: async (limit) => {
      limits.push(limit);
      return queue.splice(0, limit);
    },
    work: async (_item, signal) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Held until the stop, like a long upstream call.
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      inFlight--;
      ended++;
    },
  });
  await eventually(() => queue.length, "three items are claimed", { until: (left) => left <= 7 });
  await worker.stop();
  assert.is(most, 3);
  assert.is(ended, 3, "every started item ended before stop returned");
  assert.ok(limits.every((limit) => limit > 0 && limit <= 3));
  assert.is(queue.length, 7);
});

test("a stop that comes while a claim is on its way ends the loop without sleeping a poll first", async () => {
  let claimed: () => void = () => undefined;
  let claims = 0;
  const worker = startLeasedWorker<number>({
    name: "test",
    log,
    concurrency: 1,
    // Far longer than the eventually guard: a loop that sleeps it before stopping fails the test.
    pollMs: 3_600_000,
    claim: async () => {
      claims++;
      await new Promise<void>((resolve) => (claimed = resolve));
      return [];
    },
  });
  await eventually(() => claims, "the first claim is under way");
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  claimed();
  await eventually(() => stopped, "stop returns once the claim is back");
  await stopping;
  assert.is(claims, 1, "no claim after the stop");
});

test("runOnce releases the leases of a gone process of this machine, never an owner of this process", async () => {
  const gonePid = spawnSync(process.execPath, ["-e", "0"]).pid!;
  const gone = `${os.hostname()}:${gonePid}:0badc0de`;
  const sibling = newLeaseOwner();
  const self = newLeaseOwner();
  const foreign = `elsewhere.example:${gonePid}:0badc0de`;
  const released: string[] = [];
  const worker = startLeasedWorker<number>({
    name: "test",
    log,
    concurrency: 1,
    pollMs: 0,
    claim: async () => [],
    releaseDead: {
      self,
      owners: async () => [gone, sibling, self, foreign],
      release: async (owner) => void released.push(owner),
    },
  });
  await worker.runOnce();
  await worker.stop();
  assert.equal(released, [gone]);
  assert.is(
    isGoneLocalOwner(`${os.hostname()}:${process.pid}:feedface`, self),
    true,
    "our pid, not ours: a restarted container's predecessor",
  );
});

test.run();
