import OpenAI from "openai";
import { QueryTypes } from "sequelize";
import * as assert from "uvu/assert";
import { FAST_ENGINE, chatItems, submit, waitTerminal } from "../../support/batches.js";
import { eventually } from "../../support/eventually.js";
import { at } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { suite } from "../../support/suite.js";
import { callModel } from "../../../intern-host/agent/model-client.js";
import { newKey } from "./support.js";

/**
 * What a client and a batch do with a rate limit's 429 (docs/api/limits.md), on windows short
 * enough to wait for: the per-minute limits of keys are counted per second here
 * (GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS), so a key limited to 60 requests a minute may make one
 * a second. The official `openai` SDK's automatic retry waits what Retry-After says and is then
 * served; a batch's items wait for the next window instead of failing, without spending a try (one
 * try each here); an intern's model calls wait it out too, instead of ending the run.
 */
const ONE_A_SECOND = { svc_rate_limit: { requests_per_minute: 60 } };

const test = suite<{ env: InferenceGateway }>("rate limits: waiting for the next window");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({
    GATEWAY_RATE_LIMIT_MINUTE_WINDOW_SECONDS: "1",
    GATEWAY_BATCH_MAX_ATTEMPTS: "1",
    ...FAST_ENGINE,
  });
});
test.after(async (ctx) => ctx.env.stop());

interface Seen {
  status: number;
  headers: Headers;
  text: Promise<string>;
}

test("the openai SDK's automatic retry honours Retry-After: a 429, then a success once the window has turned", async ({
  env,
}) => {
  const { key } = await newKey(env.gw.url, env.gw.key, ONE_A_SECOND);
  const seen: Seen[] = [];
  const client = new OpenAI({
    apiKey: key,
    baseURL: `${env.gw.url}/api/v1`,
    maxRetries: 3,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      seen.push({ status: res.status, headers: res.headers, text: res.clone().text() });
      return res;
    },
  });
  const ask = () => client.chat.completions.create({ model: "mock/chat", messages: [{ role: "user", content: "Hi" }] });
  // Calls follow each other until one meets a used-up window (the first of a window is served at once).
  for (let calls = 0; calls < 10 && !seen.some((s) => s.status === 429); calls++) {
    const completion = await ask();
    assert.is(completion.choices[0]?.message.content, "Hello from chat-a");
  }
  const refused = seen.findIndex((s) => s.status === 429);
  assert.ok(refused >= 0, "a call met the limit");
  const limited = seen[refused]!;
  assert.is(limited.headers.get("retry-after"), "1");
  assert.match(
    await limited.text,
    /this key's limit of 1 request per 1 s \(svc_rate_limit\.requests_per_minute: 60 per minute, counted per 1 s\) is reached/,
  );
  assert.is(limited.headers.get("x-ratelimit-limit-requests"), "1");
  assert.is(limited.headers.get("x-ratelimit-remaining-requests"), "0");
  assert.ok(limited.headers.get("x-ratelimit-reset-requests"), "the reset is said");
  assert.is(seen[refused + 1]?.status, 200, "the SDK retried after Retry-After and was served");
  assert.is(
    seen[refused + 1]?.headers.get("x-ratelimit-remaining-requests"),
    "0",
    "the retry took the new window's one request",
  );
});

test("a batch's items wait for the next window of the key's limit instead of failing, spending no try", async ({
  env,
}) => {
  const { key, hash } = await newKey(env.gw.url, env.gw.key, ONE_A_SECOND);
  const created = await submit(env.gw.url, key, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests: chatItems(3),
  });
  assert.is(created.status, 202, created.text);
  const id = String(at(created.body, "id"));
  const done = await waitTerminal(env.gw.url, key, id);
  assert.is(at(done.body, "status"), "completed", done.text);
  assert.equal(at(done.body, "request_counts"), { total: 3, completed: 3, failed: 0 });
  const rows = await env.gw.gateway.sequelize.query<{ attempts: number }>(
    "SELECT attempts FROM batch_items WHERE batch_id = :id ORDER BY idx",
    {
      type: QueryTypes.SELECT,
      replacements: { id },
    },
  );
  assert.equal(
    rows.map((r) => r.attempts),
    [1, 1, 1],
    "waiting for a window is no try",
  );
  // The items' use of their windows is written apart from their results (LeaseBook.settleApart).
  const counted = () =>
    env.gw.gateway.sequelize.query<{ count: number }>("SELECT count FROM request_counters WHERE name = :name", {
      type: QueryTypes.SELECT,
      replacements: { name: `rate:key:${hash}:requests` },
    });
  const windows = await eventually(counted, "the three items are counted, each in a window of its own", {
    until: (counts) => counts.reduce((sum, w) => sum + w.count, 0) === 3,
  });
  assert.ok(
    windows.every((w) => w.count <= 1),
    `one request per window: ${windows.map((w) => w.count)}`,
  );
});

test("an intern's model calls wait out a rate limit's 429 instead of ending the run", async ({ env }) => {
  const { key, hash } = await newKey(env.gw.url, env.gw.key, ONE_A_SECOND);
  const ask = () =>
    callModel({
      gatewayUrl: env.gw.url,
      apiKey: key,
      model: "mock/chat",
      sessionId: "s-paced",
      messages: [{ role: "user", content: "Hi" }],
      tools: [],
      signal: AbortSignal.timeout(30_000),
      onContent: () => undefined,
    });
  // The gateway's refusals are ledger rows (written behind): calls follow each other until one was refused.
  const refused = async () => {
    const [row] = await env.gw.gateway.sequelize.query<{ n: string }>(
      "SELECT count(*) AS n FROM usage_ledger WHERE key_hash = :hash AND rate_limit IS NOT NULL",
      {
        type: QueryTypes.SELECT,
        replacements: { hash },
      },
    );
    return Number(row!.n);
  };
  let served = 0;
  for (let calls = 0; calls < 10 && (await refused()) === 0; calls++) {
    const turn = await ask();
    assert.is(turn.content, "Hello from chat-a");
    served++;
  }
  await eventually(refused, "a call met the limit", { until: (n) => n >= 1 });
  assert.ok(served >= 2, "the call that met the limit waited and was served");
});

test.run();
