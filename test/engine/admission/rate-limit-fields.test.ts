import * as assert from "uvu/assert";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { suite } from "../../support/suite.js";

/**
 * `svc_rate_limit` on keys and workspaces (docs/api/limits.md): what POST and PATCH take, what the
 * records, GET /key and the lists show, and the 400s that name the field at fault.
 */
const test = suite<{ gw: TestGateway }>("rate limits: the svc_rate_limit fields");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => ctx.gw.stop());

const post = (gw: TestGateway, path: string, body: Record<string, unknown>, key = gw.key) =>
  call(gw.url, "POST", path, { key, body });
const patch = (gw: TestGateway, path: string, body: Record<string, unknown>) =>
  call(gw.url, "PATCH", path, { key: gw.key, body });
const slug = () => `w-${Math.random().toString(36).slice(2, 10)}`;

function assertBadValue(res: Reply, field: string, context: string): void {
  assert.is(res.status, 400, `${context}: ${res.text}`);
  assert.ok(
    String(at(res.body, "error", "message")).includes(field),
    `${context}: the message names ${field}: ${res.text}`,
  );
}

test(
  "a key's limits: set at creation, shown on its record, " +
    "GET /keys and GET /key, replaced by PATCH, removed with null",
  async ({ gw }) => {
    const created = await post(gw, "/api/v1/keys", {
      name: "paced",
      svc_rate_limit: { requests_per_minute: 30, tokens_per_minute: 40_000 },
    });
    assert.is(created.status, 201, created.text);
    assert.equal(at(created.body, "data", "svc_rate_limit"), { requests_per_minute: 30, tokens_per_minute: 40_000 });
    const hash = String(at(created.body, "data", "hash"));
    const own = await call(gw.url, "GET", "/api/v1/key", { key: String(at(created.body, "key")) });
    assert.equal(at(own.body, "data", "svc_rate_limit"), { requests_per_minute: 30, tokens_per_minute: 40_000 });
    const listed = await call(gw.url, "GET", "/api/v1/keys", { key: gw.key });
    const row = (at(listed.body, "data") as Array<Record<string, unknown>>).find((k) => k.hash === hash);
    assert.equal(row?.svc_rate_limit, { requests_per_minute: 30, tokens_per_minute: 40_000 });

    const replaced = await patch(gw, `/api/v1/keys/${hash}`, { svc_rate_limit: { tokens_per_minute: 500 } });
    assert.is(replaced.status, 200, replaced.text);
    assert.equal(
      at(replaced.body, "data", "svc_rate_limit"),
      { requests_per_minute: null, tokens_per_minute: 500 },
      "a write replaces both values",
    );
    const renamed = await patch(gw, `/api/v1/keys/${hash}`, { name: "still paced" });
    assert.equal(
      at(renamed.body, "data", "svc_rate_limit"),
      { requests_per_minute: null, tokens_per_minute: 500 },
      "a PATCH without it keeps it",
    );
    const cleared = await patch(gw, `/api/v1/keys/${hash}`, { svc_rate_limit: null });
    assert.is(at(cleared.body, "data", "svc_rate_limit"), null);
    const fetched = await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key });
    assert.is(at(fetched.body, "data", "svc_rate_limit"), null);
    const plain = await post(gw, "/api/v1/keys", { name: "unpaced" });
    assert.is(at(plain.body, "data", "svc_rate_limit"), null, "a key without limits shows null");
  },
);

test("a workspace's limits: set at creation, shown, replaced and removed", async ({ gw }) => {
  const created = await post(gw, "/api/v1/workspaces", {
    name: "Paced",
    slug: slug(),
    svc_rate_limit: { requests_per_minute: 5 },
  });
  assert.is(created.status, 201, created.text);
  assert.equal(at(created.body, "data", "svc_rate_limit"), { requests_per_minute: 5, tokens_per_minute: null });
  const id = String(at(created.body, "data", "id"));
  const replaced = await patch(gw, `/api/v1/workspaces/${id}`, {
    svc_rate_limit: { requests_per_minute: 7, tokens_per_minute: 9000 },
  });
  assert.is(replaced.status, 200, replaced.text);
  assert.equal(at(replaced.body, "data", "svc_rate_limit"), { requests_per_minute: 7, tokens_per_minute: 9000 });
  const fetched = await call(gw.url, "GET", `/api/v1/workspaces/${id}`, { key: gw.key });
  assert.equal(at(fetched.body, "data", "svc_rate_limit"), { requests_per_minute: 7, tokens_per_minute: 9000 });
  const cleared = await patch(gw, `/api/v1/workspaces/${id}`, { svc_rate_limit: null });
  assert.is(at(cleared.body, "data", "svc_rate_limit"), null);
});

test("bad values are 400s that name the field, on every write", async ({ gw }) => {
  const key = await post(gw, "/api/v1/keys", { name: "target" });
  const hash = String(at(key.body, "data", "hash"));
  const workspace = await post(gw, "/api/v1/workspaces", { name: "Target", slug: slug() });
  const id = String(at(workspace.body, "data", "id"));
  const writes: Array<[string, (value: unknown) => Promise<Reply>]> = [
    ["POST /keys", (value) => post(gw, "/api/v1/keys", { name: "bad", svc_rate_limit: value })],
    ["PATCH /keys/{hash}", (value) => patch(gw, `/api/v1/keys/${hash}`, { svc_rate_limit: value })],
    [
      "POST /workspaces",
      (value) => post(gw, "/api/v1/workspaces", { name: "Bad", slug: slug(), svc_rate_limit: value }),
    ],
    ["PATCH /workspaces/{id}", (value) => patch(gw, `/api/v1/workspaces/${id}`, { svc_rate_limit: value })],
  ];
  const bad: Array<[unknown, string]> = [
    [{ requests_per_minute: 0 }, "svc_rate_limit.requests_per_minute"],
    [{ tokens_per_minute: -5 }, "svc_rate_limit.tokens_per_minute"],
    [{ tokens_per_minute: 1.5 }, "svc_rate_limit.tokens_per_minute"],
    [{ requests_per_minute: "ten" }, "svc_rate_limit.requests_per_minute"],
    [{ tokens_per_minute: 2_000_000_000 }, "svc_rate_limit.tokens_per_minute"],
    ["60/min", "svc_rate_limit"],
  ];
  for (const [what, write] of writes) {
    for (const [value, field] of bad) assertBadValue(await write(value), field, `${what} ${JSON.stringify(value)}`);
  }
  const unchanged = await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key });
  assert.is(at(unchanged.body, "data", "svc_rate_limit"), null, "a refused write changed nothing");
});

test.run();
