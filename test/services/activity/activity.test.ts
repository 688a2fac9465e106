import { status } from "@grpc/grpc-js";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ActivityService } from "../../../gen/gateway/v1/activity_pb.js";
import { encodeCursor } from "../../../server/platform/rpc/pagination.js";
import { bearer, createGrpcClient, grpcFailure } from "../../support/grpc-client.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { sseData } from "../../support/sse.js";

/**
 * GET /activity, GET /generation?id= and GET /generations over real calls through the mock
 * upstream: totals by day and endpoint, one generation with its attempts, the request log with its
 * filters and pages, who may see what, and bad input.
 */
interface Key {
  secret: string;
  hash: string;
}

/** What a client learnt from one call's answer. */
interface Made {
  id: string;
  key: Key;
  model: string;
  cost: number;
  promptTokens: number;
  completionTokens: number;
}

interface Ctx {
  env: InferenceGateway;
  management: Key;
  alice: Key;
  bob: Key;
  other: { key: string; generation: string };
  /** In the order they were made. */
  calls: {
    plain: Made;
    streamed: Made;
    fellBack: Made;
    claude: Made;
    failed: string;
  };
}

type Json = Record<string, unknown>;
const test = suite<Ctx>("activity and generations");

const HELLO = [{ role: "user", content: "Hello there" }];

async function newKey(env: InferenceGateway, name: string): Promise<Key> {
  const res = await call(env.gw.url, "POST", "/api/v1/keys", { key: env.gw.key, body: { name } });
  assert.is(res.status, 201, res.text);
  return { secret: at(res.body, "key") as string, hash: at(res.body, "data", "hash") as string };
}

async function chat(env: InferenceGateway, key: Key, body: Json): Promise<Made> {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: key.secret,
    body: { messages: HELLO, ...body },
  });
  assert.is(res.status, 200, res.text);
  return {
    id: at(res.body, "id") as string,
    key,
    model: at(res.body, "model") as string,
    cost: at(res.body, "usage", "cost") as number,
    promptTokens: at(res.body, "usage", "prompt_tokens") as number,
    completionTokens: at(res.body, "usage", "completion_tokens") as number,
  };
}

test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
  const { env } = ctx;
  const own = await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key });
  ctx.management = { secret: env.gw.key, hash: at(own.body, "data", "hash") as string };
  ctx.alice = await newKey(env, "activity-alice");
  ctx.bob = await newKey(env, "activity-bob");

  const plain = await chat(env, ctx.alice, { model: "mock/chat" });
  // Streamed: the id and usage come in the chunks.
  const streamedRes = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: ctx.alice.secret,
    body: { model: "mock/chat", messages: HELLO, stream: true },
  });
  assert.is(streamedRes.status, 200, streamedRes.text);
  const chunks = sseData(streamedRes.text).filter((data): data is Json => typeof data === "object" && data !== null);
  const usage = chunks.at(-1)!.usage as Json;
  const streamed: Made = {
    id: chunks[0]!.id as string,
    key: ctx.alice,
    model: "mock/chat",
    cost: usage.cost as number,
    promptTokens: usage.prompt_tokens as number,
    completionTokens: usage.completion_tokens as number,
  };
  // The cheapest endpoint fails once: Backup answers, after a failed attempt on MockAI.
  env.upstream.rule({ model: "chat-a", status: 529, times: 1 });
  const fellBack = await chat(env, ctx.alice, { model: "mock/chat" });
  const claude = await chat(env, ctx.bob, { model: "mock/claude" });
  // A request the provider refuses ends the generation (no fallback): status error.
  env.upstream.rule({ model: "chat-a", status: 400, times: 1 });
  // Pinned to MockAI: the failure before may have lowered its rank.
  const failedRes = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: ctx.alice.secret,
    body: { model: "mock/chat", messages: HELLO, provider: { only: ["mockai"] } },
  });
  assert.is(failedRes.status, 400, failedRes.text);
  const failed = await onlyNewGeneration(ctx, [plain.id, streamed.id, fellBack.id, claude.id]);
  ctx.calls = { plain, streamed, fellBack, claude, failed };

  const seeded = await seedOrganization("activity-other-org");
  const otherCall = await chat(
    env,
    { secret: seeded.key, hash: "" },
    { model: "mock/chat", provider: { only: ["mockai"] } },
  );
  ctx.other = { key: seeded.key, generation: otherCall.id };
});
test.after(async (ctx) => ctx.env.stop());

/** The failed call's id is not in its error answer: it is the one generation of the log not made before. */
async function onlyNewGeneration(ctx: Ctx, known: string[]): Promise<string> {
  const res = await call(ctx.env.gw.url, "GET", "/api/v1/generations?status=error", { key: ctx.management.secret });
  assert.is(res.status, 200, res.text);
  const ids = (at(res.body, "data") as Json[]).map((g) => g.id as string).filter((id) => !known.includes(id));
  assert.is(ids.length, 1, res.text);
  return ids[0]!;
}

function get(ctx: Ctx, path: string, key: string = ctx.management.secret): Promise<Reply> {
  return call(ctx.env.gw.url, "GET", path, { key });
}

async function generation(ctx: Ctx, id: string, key?: string): Promise<Json> {
  const res = await get(ctx, `/api/v1/generation?id=${encodeURIComponent(id)}`, key);
  assert.is(res.status, 200, res.text);
  return at(res.body, "data") as Json;
}

function assertError(res: Reply, status: number, mentions: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(at(res.body, "error", "code"), status, res.text);
  assert.match(String(at(res.body, "error", "message")), mentions);
}

const close = (actual: unknown, expected: number, what: string) =>
  assert.ok(
    typeof actual === "number" && Math.abs(actual - expected) < 1e-12,
    `${what}: ${String(actual)} ≠ ${expected}`,
  );

test("GET /generation: the call as its answer reported it, with both attempts of a fallback", async (ctx) => {
  const { fellBack } = ctx.calls;
  const data = await generation(ctx, fellBack.id);
  assert.is(data.id, fellBack.id);
  assert.is(data.model, "mock/chat");
  assert.is(data.provider_name, "Backup");
  close(data.total_cost, fellBack.cost, "total_cost");
  close(data.usage, fellBack.cost, "usage");
  assert.is(data.upstream_inference_cost, null);
  assert.is(data.tokens_prompt, fellBack.promptTokens);
  assert.is(data.tokens_completion, fellBack.completionTokens);
  assert.is(data.native_tokens_prompt, fellBack.promptTokens);
  assert.is(data.native_tokens_completion, fellBack.completionTokens);
  assert.is(data.native_tokens_reasoning, 0);
  assert.is(data.streamed, false);
  assert.is(data.cancelled, false);
  assert.is(data.is_byok, false);
  assert.is(data.api_type, "completions");
  assert.is(data.status, "success");
  assert.is(data.http_status, 200);
  assert.is(data.api_key_hash, ctx.alice.hash);
  assert.is(data.data_region, "global");
  assert.type(data.latency, "number");
  assert.type(data.generation_time, "number");
  assert.ok(!Number.isNaN(Date.parse(String(data.created_at))), String(data.created_at));
  for (const field of [
    "upstream_id",
    "cache_discount",
    "app_id",
    "moderation_latency",
    "finish_reason",
    "native_finish_reason",
    "origin",
    "router",
    "num_media_prompt",
    "num_search_results",
  ]) {
    assert.is(data[field], null, `${field} is not recorded`);
  }
  const attempts = data.provider_responses as Json[];
  assert.equal(
    attempts.map((a) => [a.endpoint_id, a.provider_name, a.model_permaslug, a.is_byok, a.id]),
    [
      ["mock/chat@mockai", "MockAI", "mock/chat", false, null],
      ["mock/chat@backup", "Backup", "mock/chat", false, null],
    ],
  );
  assert.ok((attempts[0]!.status as number) >= 500, "the failed attempt's status");
  assert.is(attempts[1]!.status, 200);
});

test("GET /generation: a streamed call, a failed one, and another key's own", async (ctx) => {
  const streamed = await generation(ctx, ctx.calls.streamed.id, ctx.alice.secret);
  assert.is(streamed.streamed, true);
  assert.is(streamed.provider_name, "MockAI");
  close(streamed.total_cost, ctx.calls.streamed.cost, "total_cost");
  assert.is((streamed.provider_responses as Json[]).length, 1);

  const failed = await generation(ctx, ctx.calls.failed);
  assert.equal([failed.status, failed.http_status, failed.total_cost], ["error", 400, 0]);

  const claude = await generation(ctx, ctx.calls.claude.id, ctx.bob.secret);
  assert.equal(
    [claude.model, claude.provider_name, claude.data_region, claude.api_key_hash],
    ["mock/claude", "MockAnthropic", "europe", ctx.bob.hash],
  );
});

test("GET /generation: another key's call, another organization's, and an unknown id are 404", async (ctx) => {
  const notFound = (res: Reply) => assertError(res, 404, /not found/);
  notFound(await get(ctx, `/api/v1/generation?id=${ctx.calls.claude.id}`, ctx.alice.secret));
  notFound(await get(ctx, `/api/v1/generation?id=${ctx.calls.plain.id}`, ctx.bob.secret));
  notFound(await get(ctx, `/api/v1/generation?id=${ctx.calls.plain.id}`, ctx.other.key));
  notFound(await get(ctx, `/api/v1/generation?id=${ctx.other.generation}`));
  notFound(await get(ctx, "/api/v1/generation?id=gen-0-nothing"));
  // The other organization's management key sees its own.
  assert.is((await generation(ctx, ctx.other.generation, ctx.other.key)).id, ctx.other.generation);
});

test("GET /generation: no id is a 400 naming it", async (ctx) => {
  assertError(await get(ctx, "/api/v1/generation"), 400, /\bid\b/);
  assertError(await get(ctx, "/api/v1/generation?id="), 400, /\bid\b/);
  assertError(await get(ctx, `/api/v1/generation?id=${"x".repeat(300)}`), 400, /\bid\b/);
});

/** Expected activity rows of this organization from the calls' answers: [date, model, endpoint, requests, usage]. */
function expectedActivity(ctx: Ctx, date: string, keyHash?: string): Array<[string, string, string, number, number]> {
  const { plain, streamed, fellBack, claude } = ctx.calls;
  const mine = (made: Made) => keyHash === undefined || made.key.hash === keyHash;
  const sum = (calls: Made[]) => calls.filter(mine).reduce((total, made) => total + made.cost, 0);
  const rows: Array<[string, string, string, number, number]> = [];
  // MockAI: two answers, the fallback's failed attempt and the refused request (Alice's, all of them).
  if (keyHash === undefined || keyHash === ctx.alice.hash) {
    rows.push(
      [date, "mock/chat", "mock/chat@mockai", 4, sum([plain, streamed])],
      [date, "mock/chat", "mock/chat@backup", 1, sum([fellBack])],
    );
  }
  if (keyHash === undefined || keyHash === ctx.bob.hash)
    rows.push([date, "mock/claude", "mock/claude@mockanthropic", 1, sum([claude])]);
  return rows;
}

function activityOf(body: unknown): Array<[string, string, string, number, number]> {
  return (at(body, "data") as Json[]).map((row) => [
    row.date as string,
    row.model as string,
    row.endpoint_id as string,
    row.requests as number,
    row.usage as number,
  ]);
}

function sortedByEndpoint<T extends [string, string, string, ...unknown[]]>(rows: T[]): T[] {
  return [...rows].sort((a, b) => a[2].localeCompare(b[2]));
}

function assertActivity(
  actual: Array<[string, string, string, number, number]>,
  expected: Array<[string, string, string, number, number]>,
): void {
  const got = sortedByEndpoint(actual);
  const want = sortedByEndpoint(expected);
  assert.equal(
    got.map((row) => row.slice(0, 4)),
    want.map((row) => row.slice(0, 4)),
  );
  got.forEach((row, i) => close(row[4], want[i]![4], `usage of ${row[2]}`));
}

test("GET /activity: the organization's calls by day and endpoint, with the right totals", async (ctx) => {
  const day = String((await generation(ctx, ctx.calls.plain.id)).created_at).slice(0, 10);
  const res = await get(ctx, "/api/v1/activity");
  assert.is(res.status, 200, res.text);
  assertActivity(activityOf(res.body), expectedActivity(ctx, day));

  const rows = at(res.body, "data") as Json[];
  const backup = rows.find((row) => row.endpoint_id === "mock/chat@backup")!;
  assert.equal(
    [
      backup.model_permaslug,
      backup.provider_name,
      backup.byok_usage_inference,
      backup.prompt_tokens,
      backup.completion_tokens,
      backup.reasoning_tokens,
    ],
    ["mock/chat", "Backup", 0, ctx.calls.fellBack.promptTokens, ctx.calls.fellBack.completionTokens, 0],
  );
  // The most spent first within a day.
  const spent = rows.map((row) => (row.usage as number) + (row.byok_usage_inference as number));
  assert.equal(
    spent,
    [...spent].sort((a, b) => b - a),
  );

  // One day, one key, one member.
  const oneDay = await get(ctx, `/api/v1/activity?date=${day}`);
  assertActivity(activityOf(oneDay.body), expectedActivity(ctx, day));
  const yesterday = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  assert.equal(at((await get(ctx, `/api/v1/activity?date=${yesterday}`)).body, "data"), []);
  assertActivity(
    activityOf((await get(ctx, `/api/v1/activity?api_key_hash=${ctx.bob.hash}`)).body),
    expectedActivity(ctx, day, ctx.bob.hash),
  );
  assertActivity(
    activityOf((await get(ctx, `/api/v1/activity?api_key_hash=${ctx.alice.hash}`)).body),
    expectedActivity(ctx, day, ctx.alice.hash),
  );
  assert.equal(at((await get(ctx, "/api/v1/activity?user_id=nobody")).body, "data"), []);
});

test("GET /activity: another organization sees only its own; other keys get 403", async (ctx) => {
  const res = await get(ctx, "/api/v1/activity", ctx.other.key);
  assert.is(res.status, 200, res.text);
  assert.equal(
    activityOf(res.body).map((row) => row.slice(1, 4)),
    [["mock/chat", "mock/chat@mockai", 1]],
  );
  assertError(await get(ctx, "/api/v1/activity", ctx.alice.secret), 403, /management/);
});

test("GET /activity: a malformed or out-of-range date is a 400 naming date", async (ctx) => {
  const today = new Date().toISOString().slice(0, 10);
  for (const date of ["2024-1-1", "yesterday", "2024-02-30", "2024-13-01", "0000-01-01", ""]) {
    assertError(await get(ctx, `/api/v1/activity?date=${date}`), 400, /\bdate\b/);
  }
  const old = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10);
  assertError(
    await get(ctx, `/api/v1/activity?date=${old}`),
    400,
    new RegExp(`date must be today or one of the 30 days before it .*${today}`),
  );
  const tomorrow = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
  assertError(await get(ctx, `/api/v1/activity?date=${tomorrow}`), 400, /\bdate\b/);
  assertError(await get(ctx, "/api/v1/activity?api_key_hash=ABC"), 400, /api_key_hash/);
});

function ids(res: Reply): string[] {
  assert.is(res.status, 200, res.text);
  return (at(res.body, "data") as Json[]).map((g) => g.id as string);
}

test("GET /generations: newest first, filtered by model, key, status and time", async (ctx) => {
  const { plain, streamed, fellBack, claude, failed } = ctx.calls;
  const all = [failed, claude.id, fellBack.id, streamed.id, plain.id];
  const res = await get(ctx, "/api/v1/generations");
  assert.equal(ids(res), all, "the other organization's generation is not listed");
  assert.is(at(res.body, "has_more"), false);
  assert.is(at(res.body, "cursor"), null);
  // Each item is GET /generation's data.
  assert.equal((at(res.body, "data") as Json[])[2], await generation(ctx, fellBack.id));

  assert.equal(ids(await get(ctx, "/api/v1/generations?model=mock/claude")), [claude.id]);
  assert.equal(ids(await get(ctx, `/api/v1/generations?api_key_hash=${ctx.alice.hash}`)), [
    failed,
    fellBack.id,
    streamed.id,
    plain.id,
  ]);
  assert.equal(ids(await get(ctx, "/api/v1/generations?status=error")), [failed]);
  assert.equal(ids(await get(ctx, "/api/v1/generations?status=success&model=mock/chat")), [
    fellBack.id,
    streamed.id,
    plain.id,
  ]);

  const claudeAt = String((await generation(ctx, claude.id)).created_at);
  assert.equal(ids(await get(ctx, `/api/v1/generations?start=${claudeAt}`)), [failed, claude.id]);
  assert.equal(ids(await get(ctx, `/api/v1/generations?end=${claudeAt}`)), [fellBack.id, streamed.id, plain.id]);
  assert.equal(ids(await get(ctx, "/api/v1/generations?start=2030-01-01T00:00:00Z")), []);
});

test("GET /generations: a key that is not a management key sees only its own", async (ctx) => {
  const { plain, streamed, fellBack, claude, failed } = ctx.calls;
  assert.equal(ids(await get(ctx, "/api/v1/generations", ctx.alice.secret)), [
    failed,
    fellBack.id,
    streamed.id,
    plain.id,
  ]);
  assert.equal(ids(await get(ctx, "/api/v1/generations", ctx.bob.secret)), [claude.id]);
  assert.equal(ids(await get(ctx, `/api/v1/generations?api_key_hash=${ctx.bob.hash}`, ctx.alice.secret)), []);
  assert.equal(ids(await get(ctx, "/api/v1/generations", ctx.other.key)), [ctx.other.generation]);
});

test("GET /generations: pages follow each other without gaps or repeats", async (ctx) => {
  const everything = ids(await get(ctx, "/api/v1/generations"));
  const seen: string[] = [];
  let path = "/api/v1/generations?limit=2";
  for (;;) {
    const res = await get(ctx, path);
    seen.push(...ids(res));
    const cursor = at(res.body, "cursor");
    if (at(res.body, "has_more") !== true) {
      assert.is(cursor, null);
      break;
    }
    assert.is((at(res.body, "data") as Json[]).length, 2);
    path = `/api/v1/generations?limit=2&cursor=${encodeURIComponent(String(cursor))}`;
  }
  assert.equal(seen, everything);
});

test("GET /generations: a bad page size, cursor, status or time is a 400 naming the field", async (ctx) => {
  for (const limit of ["0", "101", "-1", "ten"])
    assertError(await get(ctx, `/api/v1/generations?limit=${limit}`), 400, /\blimit\b/);
  assertError(await get(ctx, "/api/v1/generations?cursor=nonsense"), 400, /\bcursor\b/);
  // A cursor of the right form with a time Postgres cannot take.
  const badTime = encodeCursor(["2024-13-01T00:00:00.000000Z", "00000000-0000-4000-8000-000000000000"]);
  assertError(await get(ctx, `/api/v1/generations?cursor=${badTime}`), 400, /\bcursor\b/);
  assertError(await get(ctx, "/api/v1/generations?status=finished"), 400, /\bstatus\b/);
  assertError(await get(ctx, "/api/v1/generations?start=yesterday"), 400, /\bstart\b/);
  assertError(
    await get(ctx, "/api/v1/generations?start=2024-02-01T00:00:00Z&end=2024-01-01T00:00:00Z"),
    400,
    /\bstart\b/,
  );
  assertError(await get(ctx, "/api/v1/generations?api_key_hash=xyz"), 400, /api_key_hash/);
});

test("over gRPC: the same generation, its 404 outside the scope, and a time out of range named", async (ctx) => {
  const client = createGrpcClient(ActivityService, ctx.env.gw.grpcUrl);
  try {
    const { fellBack } = ctx.calls;
    const answer = await client.unary(
      ActivityService.method.getGeneration,
      { id: fellBack.id },
      bearer(ctx.alice.secret),
    );
    assert.equal(
      [answer.data?.id, answer.data?.providerName, answer.data?.providerResponses.length],
      [fellBack.id, "Backup", 2],
    );
    close(answer.data?.totalCost, fellBack.cost, "total_cost");

    const hidden = await grpcFailure(
      client.unary(ActivityService.method.getGeneration, { id: fellBack.id }, bearer(ctx.bob.secret)),
    );
    assert.equal([hidden.code, hidden.detail?.httpStatus], [status.NOT_FOUND, 404]);

    // A binary client can send seconds no RFC 3339 text can say.
    const tooEarly = await grpcFailure(
      client.unary(
        ActivityService.method.listGenerations,
        { start: { seconds: -99_999_999_999n } },
        bearer(ctx.management.secret),
      ),
    );
    assert.equal([tooEarly.code, tooEarly.detail?.httpStatus], [status.INVALID_ARGUMENT, 400]);
    assert.match(tooEarly.details, /\bstart\b/);
  } finally {
    client.close();
  }
});

test.run();
