import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { allLedgerRows, ledgerRowsOf } from "../../support/ledger-rows.js";
import { sseData } from "../../support/sse.js";

/**
 * The overall request deadline (GATEWAY_REQUEST_TIMEOUT_MS): 504, or an error event once a stream
 * has begun, and an `error` ledger row. The deadline is far longer than a call takes on a loaded
 * machine, so that a fast call never races it; the calls it must end are held by a provider that
 * does not answer, or stops in the middle of a stream, until the deadline ends them.
 */
const DEADLINE_MS = 2_500;
/** The providers wait for headers longer still, so that the deadline and not their own timeout ends the calls. */
const PROVIDER_TIMEOUT_MS = 12 * DEADLINE_MS;

const test = suite<{ gw: TestGateway; upstream: MockUpstream }>("request deadline");
test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const provider = (slug: string) => ({
    slug,
    kind: "openai",
    base_url: ctx.upstream.openaiBaseUrl,
    api_key: ctx.upstream.apiKey,
    timeout_ms: PROVIDER_TIMEOUT_MS,
  });
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const file = await writeCatalogFile({
    providers: [provider("mockai"), provider("backup")],
    models: [
      {
        id: "mock/chat",
        name: "Mock: Chat",
        context_length: 8_000,
        endpoints: [
          { provider: "mockai", upstream_model_id: "chat-a", pricing },
          { provider: "backup", upstream_model_id: "chat-b", pricing },
        ],
      },
      {
        id: "mock/embed",
        name: "Mock: Embed",
        context_length: 8_000,
        output_modalities: ["embeddings"],
        endpoints: [{ provider: "mockai", upstream_model_id: "embed-a", pricing }],
      },
    ],
  });
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: file, GATEWAY_REQUEST_TIMEOUT_MS: String(DEADLINE_MS) });
});
test.after(async (ctx) => {
  await ctx.gw?.stop();
  await ctx.upstream?.close();
});
test.before.each(({ upstream }) => upstream.reset());

const HELLO = [{ role: "user", content: "Hi there" }];

function chat(gw: TestGateway, body: Record<string, unknown> = {}): Promise<Reply> {
  return call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "mock/chat", messages: HELLO, ...body },
  });
}

function assert504(res: Reply): void {
  assert.is(res.status, 504, res.text);
  assert.equal(Object.keys(res.body as object), ["error"]);
  assert.is(at(res.body, "error", "code"), 504);
  assert.type(at(res.body, "error", "message"), "string");
}

test("a fast call is unaffected", async ({ gw }) => {
  const res = await chat(gw);
  assert.is(res.status, 200, res.text);
});

test("an upstream that has not answered by the deadline → 504, and no fallback after it", async ({ gw, upstream }) => {
  upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const res = await chat(gw);
  assert504(res);
  assert.equal(
    upstream.requests.map((r) => r.model),
    ["chat-a"],
  );
  const rows = await allLedgerRows(gw);
  const row = rows[rows.length - 1]!;
  assert.equal([row.status, row.http_status, row.endpoint_id], ["error", 504, "mock/chat@mockai"]);
});

test("a streamed call whose headers have not come by the deadline → 504", async ({ gw, upstream }) => {
  upstream.rule({ model: "chat-a", hang: true, times: 1 });
  assert504(await chat(gw, { stream: true }));
});

test("a stream still running at the deadline ends with a 504 error event and no [DONE]", async ({ gw, upstream }) => {
  // The first event at once, the next long after the deadline.
  upstream.rule({ model: "chat-a", chunkDelayMs: 10 * DEADLINE_MS, times: 1 });
  const res = await chat(gw, { stream: true });
  assert.is(res.status, 200, res.text);
  assert.not.match(res.text, /\[DONE\]/);
  const events = sseData(res.text);
  assert.ok(at(events[0], "choices") !== undefined, res.text);
  assert.is(at(events[events.length - 1], "error", "code"), 504, res.text);
  const id = String(at(events[0], "id"));
  const rows = await ledgerRowsOf(gw, id);
  assert.equal(
    rows.map((r) => [r.status, r.http_status]),
    [["error", 504]],
  );
});

test("embeddings that have not come by the deadline → 504", async ({ gw, upstream }) => {
  upstream.rule({ model: "embed-a", hang: true, times: 1 });
  assert504(
    await call(gw.url, "POST", "/api/v1/embeddings", { key: gw.key, body: { model: "mock/embed", input: "x" } }),
  );
});

test.run();
