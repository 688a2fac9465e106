import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { KeysService } from "../../gen/gateway/v1/keys_pb.js";
import { startRemoteFacade, type RemoteFacade } from "../support/remote-facade.js";
import { maskKey, newKeySecret } from "../../server/platform/secrets/key-secret.js";
import { createDatabase } from "../support/gateway.js";
import { startGatewayProcess, type GatewayProcess } from "../support/gateway-process.js";
import { at, call } from "../support/http.js";

/**
 * The facade in this process, the core in a child process (`cmd/gateway.ts --core-only`), the two
 * joined only by gRPC over h2c, as `npm run start:core` + `npm run start:facade` run them.
 */
interface Context {
  core: GatewayProcess;
  key: string;
  facade: RemoteFacade;
  url: string;
}

const test = suite<Context>("split process: REST facade → gRPC → core child");
test.before(async (ctx) => {
  ctx.key = newKeySecret();
  ctx.core = await startGatewayProcess({ databaseUrl: await createDatabase(), key: ctx.key, args: ["--core-only"] });
  ctx.facade = await startRemoteFacade(ctx.core.grpcPort);
  ctx.url = ctx.facade.url;
});
test.after(async (ctx) => {
  await ctx.facade?.close();
  if (ctx.core) await ctx.core.stop();
});

test("GET /api/v1/key through the remote core answers 200 with the key's label", async ({ url, key }) => {
  const res = await call(url, "GET", "/api/v1/key", { key });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "label"), maskKey(key));
  assert.is(at(res.body, "data", "is_management_key"), true);
  assert.not.ok(res.text.includes(key), "the secret never appears in a response");
});

test("POST /api/v1/workspaces is 201, a duplicate slug 409 in the API's envelope", async ({ url, key }) => {
  const created = await call(url, "POST", "/api/v1/workspaces", { key, body: { name: "Split", slug: "split" } });
  assert.is(created.status, 201, created.text);
  assert.is(at(created.body, "data", "slug"), "split");

  const duplicate = await call(url, "POST", "/api/v1/workspaces", {
    key,
    body: { name: "Split again", slug: "split" },
  });
  assert.is(duplicate.status, 409, duplicate.text);
  assert.is(duplicate.headers.get("content-type"), "application/json");
  const error = at(duplicate.body, "error") as Record<string, unknown>;
  assert.ok(error, "the body is {error: …}");
  assert.equal(Object.keys(duplicate.body as object), ["error"]);
  assert.is(error.code, 409);
  assert.type(error.message, "string");
  assert.ok(String(error.message).length > 0);
  for (const name of Object.keys(error))
    assert.ok(["code", "message", "metadata"].includes(name), `unexpected error field ${name}`);
});

test("bad input is 400 naming the field", async ({ url, key }) => {
  const res = await call(url, "POST", "/api/v1/workspaces", { key, body: { name: "Bad", slug: "Bad Slug" } });
  assert.is(res.status, 400, res.text);
  assert.is(at(res.body, "error", "code"), 400);
  assert.match(String(at(res.body, "error", "message")), /slug/);
});

test("a missing key is 401", async ({ url }) => {
  const res = await call(url, "GET", "/api/v1/key");
  assert.is(res.status, 401, res.text);
  assert.is(at(res.body, "error", "code"), 401);
});

test("a non-management key on a management route is 403", async ({ url, key }) => {
  const created = await call(url, "POST", "/api/v1/keys", { key, body: { name: "plain split" } });
  assert.is(created.status, 201, created.text);
  const plain = at(created.body, "key") as string;
  assert.is((await call(url, "GET", "/api/v1/key", { key: plain })).status, 200);

  const res = await call(url, "POST", "/api/v1/workspaces", { key: plain, body: { name: "x", slug: "x" } });
  assert.is(res.status, 403, res.text);
  assert.is(at(res.body, "error", "code"), 403);
  assert.match(String(at(res.body, "error", "message")), /management keys/);
});

test("a status the gRPC code table cannot express (422) crosses the remote core in its detail", async ({
  url,
  key,
}) => {
  const res = await call(url, "POST", "/api/v1/batches", {
    key,
    body: {
      endpoint: "/v1/chat/completions",
      model: "a/b:free",
      requests: [{ custom_id: "x", body: { messages: [{ role: "user", content: "hi" }] } }],
    },
  });
  assert.is(res.status, 422, res.text);
  assert.is(at(res.body, "error", "code"), 422);
  assert.match(String(at(res.body, "error", "message")), /model variants/);
});

test("the core-only child serves Connect but no REST on its HTTP port", async ({ core, key }) => {
  const rest = await call(`http://127.0.0.1:${core.httpPort}`, "GET", "/api/v1/key", { key });
  assert.is.not(rest.status, 200, `the core answered REST itself: ${rest.text}`);
  assert.is(at(rest.body, "data", "label"), undefined);

  const connect = createClient(
    KeysService,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${core.httpPort}`, httpVersion: "1.1" }),
  );
  const reply = await connect.getCurrentKey({}, { headers: { authorization: `Bearer ${key}` } });
  assert.is(reply.data?.label, maskKey(key));
});

test(
  "cmd/facade.ts, split from the core: " +
    "probes from the core's health, the API description and the console; draining on SIGTERM",
  async ({ core, key }) => {
    const facade = await startGatewayProcess({
      databaseUrl: "",
      key,
      entry: "cmd/facade.ts",
      env: { GATEWAY_CORE_URL: `http://127.0.0.1:${core.grpcPort}` },
    });
    try {
      assert.is((await call(facade.url, "GET", "/healthz")).status, 200);
      const ready = await call(facade.url, "GET", "/readyz");
      assert.is(ready.status, 200, ready.text);
      assert.equal(at(ready.body, "checks", "core"), { ok: true });
      assert.is((await call(facade.url, "GET", "/openapi.json")).status, 200);
      assert.is((await call(facade.url, "GET", "/ui/")).status, 200);
      assert.is((await call(facade.url, "GET", "/api/v1/key", { key })).status, 200);
    } finally {
      const { code } = await facade.stop();
      assert.is(code, 0, facade.lines.slice(-10).join("\n"));
    }
  },
);

test("the core never logs a key secret", async ({ core, key }) => {
  assert.ok(core.lines.some((line) => line.includes("gateway listening")));
  for (const line of core.lines) assert.not.ok(line.includes(key), `a log line carries the bootstrap secret: ${line}`);
});

test("SIGTERM shuts the core down gracefully (exit code 0)", async ({ core }) => {
  const { code, signal } = await core.stop();
  assert.is(signal, null, `the core had to be killed:\n${core.lines.slice(-10).join("\n")}`);
  assert.is(code, 0, core.lines.slice(-10).join("\n"));
  assert.ok(
    core.lines.some((line) => line.includes('"stopped"')),
    "the core logged that it stopped",
  );
});

test.run();
