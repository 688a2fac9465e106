import { getEventListeners } from "node:events";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import type { HostLimits } from "../../wire/host-protocol.js";
import { HostRun } from "../../intern-host/host-runs.js";

/**
 * A host's run object on its own (the chat suites drive it through real hosts): what it keeps per
 * question must not grow with the number of questions a run asks.
 */
const test = suite("interns: a host run's questions");

const LIMITS: HostLimits = {
  maxOpenRuns: 1,
  replayBytes: 1_048_576,
  maxSteps: 50,
  shellTimeoutMs: 1000,
  shellOutputBytes: 1024,
  shellLimits: { maxProcesses: 64, maxMemoryMiB: 1024, maxFileMiB: 64, cpuSeconds: 1 },
  fetchTimeoutMs: 1000,
  fetchBodyBytes: 1024,
  interactionTimeoutMs: 60_000,
  runTimeoutMs: 60_000,
};

test("answered questions leave no abort listener behind (a manual run asks once per command)", async () => {
  const run = new HostRun("run-1", "sess-1", "manual", LIMITS, () => {});
  try {
    for (let i = 0; i < 12; i++) {
      const asked = run.ask({ kind: "question", question: `question ${i}?` });
      const pending = run.pendingQuestion!;
      assert.is(run.answer(pending.toolCallId, `answer ${i}`).status, 202);
      assert.is(await asked, `answer ${i}`);
    }
    assert.is(getEventListeners(run.abort.signal, "abort").length, 0);
  } finally {
    run.cancel("cancelled", "the test is over");
  }
});

test("a run cancelled during a question rejects it and keeps no listener", async () => {
  const run = new HostRun("run-2", "sess-2", "manual", LIMITS, () => {});
  const asked = run.ask({ kind: "question", question: "never answered?" });
  run.cancel("cancelled", "stopped");
  assert.is(
    await asked.then(
      () => "answered",
      () => "rejected",
    ),
    "rejected",
  );
  assert.is(getEventListeners(run.abort.signal, "abort").length, 0);
});

test.run();
