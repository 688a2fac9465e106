import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { FAST_ENGINE, sql, submit, waitTerminal } from "../../support/batches.js";
import { eventually } from "../../support/eventually.js";
import { keyAndGuardrails, keyWith } from "../../support/guardrail-keys.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * The limits that keep one tenant's content filters from holding the event loop for every other
 * (docs/api/content-filters.md#limits), through the gateway: a custom pattern over the cost limits
 * is refused when saved, naming the limit, and one stored before makes its guardrail's calls
 * refused; a call whose text is more than a filter reads (GATEWAY_CONTENT_FILTER_MAX_BYTES, small
 * here) is refused with 413 under any action, and a batch item so is refused as its result. What
 * the limits count: pattern-cost.unit.test.ts.
 */
const test = suite<{ env: InferenceGateway }>("guardrails: content filter limits through the gateway");

const MAX_BYTES = 4_096;

test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(
    { ...FAST_ENGINE, GATEWAY_BATCH_NATIVE_POLL_MS: "20", GATEWAY_CONTENT_FILTER_MAX_BYTES: String(MAX_BYTES) },
    { nativeBatches: ["mockanthropic"] },
  );
});
test.after(async ({ env }) => env.stop());

function createGuardrail(env: InferenceGateway, pattern: string): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/guardrails", {
    key: env.gw.key,
    body: { name: `g-${Math.random().toString(36).slice(2)}`, content_filters: [{ pattern, action: "redact" }] },
  });
}

function chat(env: InferenceGateway, key: string, content: string): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key,
    body: { model: "mock/chat", messages: [{ role: "user", content }] },
  });
}

function assertRefused(res: Reply, status: number, message: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.match(String(at(res.body, "error", "message")), message);
}

test(
  "a pattern over the cost limits is refused when saved, with 400 naming the limit and never the pattern; " +
    "one just inside is accepted",
  async ({ env }) => {
    const slow = await createGuardrail(env, "[a-z]{1,900}[0-9]");
    assertRefused(slow, 400, /content_filters\[0\]\.pattern compiles to 1802 RE2 instructions, over the limit of 500/);
    assert.not.ok(slow.text.includes("[a-z]{1,900}[0-9]"), slow.text);
    assertRefused(
      await createGuardrail(env, "[a-z]{1,17}[0-9]"),
      400,
      /68 steps per character; the limit is 64 steps per character/,
    );
    assertRefused(
      await createGuardrail(env, "a.*b|a"),
      400,
      /without end, so the text is read again for every match.*the limit is 64 steps per character/,
    );
    const inside = await createGuardrail(env, "[a-z]{1,16}[0-9]");
    assert.is(inside.status, 201, inside.text);
    // An update is held to the same limits.
    const id = String(at(inside.body, "data", "id"));
    const patched = await call(env.gw.url, "PATCH", `/api/v1/guardrails/${id}`, {
      key: env.gw.key,
      body: {
        content_filters: [
          { pattern: "ok", action: "block" },
          { pattern: "a+b|a", action: "redact" },
        ],
      },
    });
    assertRefused(patched, 400, /content_filters\[1\]\.pattern costs too much to run/);
  },
);

test(
  "a pattern over the limits stored before them makes every " +
    "call its guardrail governs refused, saying which limit",
  async ({ env }) => {
    const { key, ids } = await keyAndGuardrails(env, {
      name: "Old rules",
      content_filters: [{ pattern: "ZEUS-\\d+", action: "redact" }],
    });
    assert.is((await chat(env, key, "Hello")).status, 200);
    await sql(env.gw.databaseUrl, "UPDATE guardrails SET content_filters = $1::jsonb WHERE id = $2", [
      JSON.stringify([{ pattern: "[a-z]{1,900}[0-9]", action: "redact" }]),
      ids[0],
    ]);
    const refused = await eventually(() => chat(env, key, "Hello"), "the stored pattern is read", {
      until: (res) => res.status !== 200,
    });
    assertRefused(
      refused,
      403,
      /Guardrail 'Old rules' has a content filter this gateway cannot apply \(.*content_filters\[0\]\.pattern compiles to 1802 RE2 instructions, over the limit of 500/,
    );
    assert.not.ok(refused.text.includes("[a-z]{1,900}[0-9]"), refused.text);
  },
);

test(
  "a call with more text than a filter reads is refused with 413 naming the setting, " +
    "under block and under redact alike; less passes",
  async ({ env }) => {
    const blocking = await keyWith(env, {
      name: "No mail",
      content_filter_builtins: [{ slug: "email", action: "block" }],
    });
    const redacting = await keyWith(env, {
      name: "Codenames",
      content_filters: [{ pattern: "ZEUS-\\d+", label: "[CODENAME]", action: "redact" }],
    });
    const long = `ZEUS-1 ${"x".repeat(MAX_BYTES + 100)}`;
    for (const [key, filter, guardrail] of [
      [blocking, "email", "No mail"],
      [redacting, "\\[CODENAME\\]", "Codenames"],
    ] as const) {
      const refused = await chat(env, key, long);
      assertRefused(
        refused,
        413,
        new RegExp(
          `content filter '${filter}' of guardrail '${guardrail}' reads for ` +
            `one call \\(GATEWAY_CONTENT_FILTER_MAX_BYTES: ${MAX_BYTES} bytes\\)`,
        ),
      );
      assert.is(at(refused.body, "error", "code"), 413);
      const passed = await chat(env, key, `ZEUS-1 ${"x".repeat(MAX_BYTES / 2)}`);
      assert.is(passed.status, 200, passed.text);
    }
    assert.not.ok(
      JSON.stringify(env.upstream.requests.map((r) => r.body)).includes("x".repeat(MAX_BYTES)),
      "the refused calls reached no provider",
    );
  },
);

for (const [model, engine] of [
  ["mock/chat", "item by item"],
  ["mock/claude", "the provider's batch API"],
] as const) {
  test(
    `batches (${engine}): ` +
      "an item with more text than a filter reads fails with that 413 as its result; the others run",
    async ({ env }) => {
      const key = await keyWith(env, {
        name: "Codenames",
        content_filters: [{ pattern: "ZEUS-\\d+", label: "[CODENAME]", action: "redact" }],
      });
      const requests = [
        {
          custom_id: "long",
          body: { model, max_tokens: 10, messages: [{ role: "user", content: "y".repeat(MAX_BYTES + 100) }] },
        },
        { custom_id: "short", body: { model, max_tokens: 10, messages: [{ role: "user", content: "About ZEUS-7" }] } },
      ];
      const accepted = await submit(env.gw.url, key, { endpoint: "/v1/chat/completions", model, requests });
      assert.is(accepted.status, 202, accepted.text);
      const done = await waitTerminal(env.gw.url, key, String(at(accepted.body, "id")));
      assert.equal(at(done.body, "request_counts"), { total: 2, completed: 1, failed: 1 }, done.text);
      const results = at(done.body, "results") as { custom_id: string; error: { message: string } | null }[];
      assert.match(
        results.find((r) => r.custom_id === "long")?.error?.message ?? "",
        /GATEWAY_CONTENT_FILTER_MAX_BYTES: 4096 bytes/,
      );
      assert.is(results.find((r) => r.custom_id === "short")?.error, null);
      assert.not.ok(
        JSON.stringify(env.upstream.requests.map((r) => r.body)).includes("y".repeat(MAX_BYTES)),
        "the long item reached no provider",
      );
    },
  );
}

test.run();
