import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import type { CatalogEndpoint } from "../../../server/engine/catalog/catalog.js";
import type { CallerContext } from "../../../server/engine/inference/caller-context.js";
import {
  isServed,
  tryEndpoints,
  type AttemptDeps,
  type AttemptPolicy,
  type EndpointAttempt,
  type FailedAttempt,
} from "../../../server/engine/inference/endpoint-attempts.js";
import type { ResolvedTarget } from "../../../server/engine/inference/upstream-targets.js";
import type { KeyChoice } from "../../../server/engine/key-pools/key-pools.js";
import { KeyPool } from "../../../server/engine/key-pools/key-pool.js";
import { poolKey } from "../../../server/engine/key-pools/pool-key.js";
import { UpstreamError, type UpstreamTarget } from "../../../server/engine/providers/provider.js";

/**
 * The one loop over a call's endpoints, without a gateway: fallback on a retryable failure, a stop
 * on any other, another key of a pool before the next endpoint (only for a policy with a key
 * choice), and the end of the loop on an abort or a failure of the gateway's own.
 */
const test = suite("inference: endpoint attempts");

const pool = new KeyPool("p", [poolKey("s1", 1, 0)], 60_000);

function attempt(provider: string): EndpointAttempt {
  return { endpoint: { id: `m@${provider}`, providerSlug: provider } as CatalogEndpoint };
}

/** Deps whose pooled providers are those named; records what the loop told the key pools. */
function depsFor(pooled: string[], anotherKey = false) {
  const told: string[] = [];
  const deps: AttemptDeps = {
    async resolveTarget(_context, endpoint): Promise<ResolvedTarget> {
      const target = { kind: "openai", baseUrl: endpoint.providerSlug, apiKey: "k" } as UpstreamTarget;
      return pooled.includes(endpoint.providerSlug)
        ? { target, isByok: false, pooled: { pool, key: pool.keys[0]! } }
        : { target, isByok: false };
    },
    keyPools: {
      afterFailure() {
        told.push("afterFailure");
        return anotherKey && told.filter((t) => t === "afterFailure").length === 1;
      },
      succeeded() {
        told.push("succeeded");
      },
    },
  };
  return { deps, told };
}

/** Runs the loop with answers scripted per call, in order; returns the outcome and the providers tried. */
async function run(
  attempts: EndpointAttempt[],
  script: (Error | string)[],
  deps: AttemptDeps,
  policy: Partial<AttemptPolicy> = {},
  tried: string[] = [],
) {
  const failures: [string, string | undefined][] = [];
  const outcome = await tryEndpoints(
    deps,
    {} as CallerContext,
    attempts,
    async (target: UpstreamTarget) => {
      tried.push(target.baseUrl);
      const answer = script.shift();
      if (answer instanceof Error) throw answer;
      return answer ?? "answer";
    },
    {
      keyChoice: undefined,
      signal: undefined,
      failed: (failure: FailedAttempt, next) =>
        failures.push([failure.attempt.endpoint.providerSlug, next?.endpoint.providerSlug]),
      ...policy,
    },
  );
  return { outcome, tried, failures };
}

const choice: KeyChoice = { affinity: () => 0, triedKeys: [], judgedKey: undefined };

test("a retryable failure falls back to the next endpoint, which answers", async () => {
  const { deps } = depsFor([]);
  const { outcome, tried, failures } = await run(
    [attempt("a"), attempt("b")],
    [new UpstreamError("status", "busy", { status: 503 }), "from b"],
    deps,
  );
  assert.equal(tried, ["a", "b"]);
  assert.equal(failures, [["a", "b"]]);
  assert.ok(outcome && isServed(outcome));
  assert.equal(outcome.value, "from b");
  assert.equal(outcome.attempt.endpoint.providerSlug, "b");
});

test("a non-retryable failure ends the loop with that attempt's failure", async () => {
  const { deps } = depsFor([]);
  const bad = new UpstreamError("status", "bad request", { status: 400 });
  const { outcome, tried, failures } = await run([attempt("a"), attempt("b")], [bad], deps);
  assert.equal(tried, ["a"]);
  assert.equal(failures, [["a", undefined]]);
  assert.ok(outcome && !isServed(outcome));
  assert.is(outcome.error, bad);
  assert.equal(outcome.attempt.endpoint.providerSlug, "a");
});

test("the last endpoint's retryable failure is the outcome", async () => {
  const { deps } = depsFor([]);
  const busy = () => new UpstreamError("timeout", "slow");
  const { outcome, tried } = await run([attempt("a"), attempt("b")], [busy(), busy()], deps);
  assert.equal(tried, ["a", "b"]);
  assert.ok(outcome && !isServed(outcome));
  assert.equal(outcome.attempt.endpoint.providerSlug, "b");
});

test(
  "with a key choice, " + "a pooled key's failure is tried again on the same endpoint when the pool says so",
  async () => {
    const { deps, told } = depsFor(["a"], true);
    const { outcome, tried, failures } = await run(
      [attempt("a"), attempt("b")],
      [new UpstreamError("status", "slow down", { status: 429 }), "again"],
      deps,
      { keyChoice: choice },
    );
    assert.equal(tried, ["a", "a"]);
    assert.equal(failures, [["a", "a"]]);
    assert.equal(told, ["afterFailure", "succeeded"]);
    assert.ok(outcome && isServed(outcome));
    assert.equal(outcome.attempt.endpoint.providerSlug, "a");
  },
);

test("without a key choice, the pool is not asked and the next endpoint is tried", async () => {
  const { deps, told } = depsFor(["a"], true);
  const { tried } = await run(
    [attempt("a"), attempt("b")],
    [new UpstreamError("status", "slow down", { status: 429 }), "from b"],
    deps,
  );
  assert.equal(tried, ["a", "b"]);
  assert.equal(told, []);
});

test("a failure of the gateway's own, or an aborted call, ends the loop at once", async () => {
  const { deps } = depsFor([]);
  const own = new Error("a bug of ours");
  const first = await run([attempt("a"), attempt("b")], [own], deps);
  assert.equal(first.tried, ["a"]);
  assert.ok(first.outcome && !isServed(first.outcome));
  assert.is(first.outcome.error, own);

  const controller = new AbortController();
  controller.abort();
  const second = await run([attempt("a"), attempt("b")], [new UpstreamError("timeout", "slow")], deps, {
    signal: controller.signal,
  });
  assert.equal(second.tried, ["a"]);
  assert.equal(second.failures, [["a", undefined]]);
});

test("the sending hook runs before each try, awaited when it is asynchronous", async () => {
  const { deps } = depsFor([]);
  const events: string[] = [];
  const hook = {
    async sending({ endpoint }: EndpointAttempt) {
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`moved to ${endpoint.providerSlug}`);
    },
  };
  await run([attempt("a"), attempt("b")], [new UpstreamError("connect", "refused"), "ok"], deps, hook, events);
  assert.equal(events, ["moved to a", "a", "moved to b", "b"]);
});

test("no endpoint to try is no outcome", async () => {
  const { deps } = depsFor([]);
  assert.is((await run([], [], deps)).outcome, undefined);
});

test.run();
