import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { httpErrorOf } from "../../../wire/errors.js";
import { customFilter, type ContentFilter } from "../../../server/engine/content-filters/content-filter.js";
import type { Deps } from "../../../server/services/deps.js";
import { filteredItem, filteredItemInTurn } from "../../../server/services/batches/batch-item-filters.js";
import type { BatchPlan } from "../../../server/services/batches/batch-plan.js";

/**
 * A batch's items are filtered one per turn of the event loop (filter-turns.ts), so that whatever
 * else the process has to do (another tenant's request) is served between two items, with the
 * results of filtering them all at once; and an item whose text is more than a filter reads for
 * one call is refused as its result. Through the gateway: test/engine/content-filters/.
 */
const test = suite("batches: filtering items");

const ITEMS = 2_000;

/** A plan and a deps with what filtering reads of them: the format, the guardrails, the settings. */
function planWith(filters: ContentFilter[], maxBytes = 1_048_576): { deps: Deps; plan: BatchPlan } {
  const deps = {
    config: { contentFilterMaxBytes: maxBytes },
    log: { warn: () => undefined },
    engine: {},
  } as unknown as Deps;
  const plan = {
    format: { api: "chat", toPipeline: (body: JsonObject) => structuredClone(body) },
    context: { guardrails: [{ contentFilters: filters }] },
  } as unknown as BatchPlan;
  return { deps, plan };
}

const redacting = () => customFilter("g", { pattern: "ZEUS-\\d+", label: "[CODENAME]", action: "redact" }, 0);
const item = (index: number) => ({
  itemId: `batch-${index}`,
  body: { model: "mock/chat", messages: [{ role: "user", content: `item ${index} about ZEUS-${index}` }] },
});

/** Counts the items filtered so far: each item's prompt goes through `redact` once (its other strings too). */
function counting(filter: ContentFilter): { filter: ContentFilter; count: () => number } {
  let filtered = 0;
  return {
    filter: {
      ...filter,
      redact: (text) => {
        if (text.startsWith("item ")) filtered++;
        return filter.redact(text);
      },
    },
    count: () => filtered,
  };
}

test(
  "items filtered at once (as the runner takes them) take a turn each: " +
    "a callback queued before them runs after the first",
  async () => {
    const { filter, count } = counting(redacting());
    const { deps, plan } = planWith([filter]);
    const running = Array.from({ length: ITEMS }, (_, index) => filteredItemInTurn(deps, plan, item(index)));
    let seenAt = -1;
    setImmediate(() => {
      seenAt = count();
    });
    const results = await Promise.all(running);
    assert.is(count(), ITEMS);
    assert.ok(
      seenAt >= 0 && seenAt <= 1,
      seenAt < 0
        ? "the callback ran only after every item was filtered"
        : `the callback ran after ${seenAt} of ${ITEMS} items`,
    );
    // The same results as filtering each at once.
    const { plan: direct } = planWith([redacting()]);
    results.forEach((result, index) => assert.equal(result, filteredItem(deps, direct, item(index))));
    assert.equal(results[7], {
      request: { model: "mock/chat", messages: [{ role: "user", content: "item 7 about [CODENAME]" }] },
    });
  },
);

test(
  "items filtered one after the other (a native batch's submission) " + "let every turn's other work run between them",
  async () => {
    const { filter, count } = counting(redacting());
    const { deps, plan } = planWith([filter]);
    const between: number[] = [];
    let ticking = true;
    // Another tenant's work: something due at every turn of the loop.
    const tick = () => {
      between.push(count());
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    for (let index = 0; index < ITEMS; index++) await filteredItemInTurn(deps, plan, item(index));
    ticking = false;
    // The other work ran at every turn: never more than one item apart.
    assert.ok(between.length >= ITEMS - 1, `${between.length} turns for ${ITEMS} items`);
    for (let index = 1; index < between.length; index++)
      assert.ok(
        between[index]! - between[index - 1]! <= 1,
        `${between[index]! - between[index - 1]!} items between two turns`,
      );
  },
);

test("a batch without content filters takes no turns", async () => {
  const { deps, plan } = planWith([]);
  let ran = false;
  setImmediate(() => {
    ran = true;
  });
  for (let index = 0; index < 100; index++) await filteredItemInTurn(deps, plan, item(index));
  assert.not.ok(ran, "no turn of the loop passed");
});

test(
  "an item with more text than a filter reads for one call is refused with 413, " +
    "naming the setting; smaller ones pass",
  () => {
    const { deps, plan } = planWith([redacting()], 2_048);
    const big = {
      itemId: "batch-9",
      body: { model: "mock/chat", messages: [{ role: "user", content: "x".repeat(3_000) }] },
    };
    const result = filteredItem(deps, plan, big);
    assert.ok("refusal" in result);
    const { status, message, reason } = httpErrorOf(result.refusal);
    assert.is(status, 413);
    assert.is(reason, "CONTENT_TOO_LARGE");
    assert.match(
      message,
      /content filter '\[CODENAME\]' of guardrail 'g' reads for one call \(GATEWAY_CONTENT_FILTER_MAX_BYTES: 2048 bytes\)/,
    );
    assert.ok("request" in filteredItem(deps, plan, item(1)));
  },
);

test.run();
