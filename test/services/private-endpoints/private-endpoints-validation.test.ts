import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { ISO } from "../../support/shapes.js";
import {
  activate,
  addCredential,
  assertError,
  assertFailsAt,
  assertNoLeak,
  checksOf,
  createEndpoint,
  endpointBody,
  endpointsSuite,
  getEndpoint,
  type Json,
  newEndpoint,
  patchEndpoint,
  requestsFor,
  UNKNOWN_ID,
  validate,
} from "./private-endpoints-fixture.js";

/** Validation against the upstream with the workspace's BYOK key, its failures, and activation. */
const test = endpointsSuite("private endpoints: validate and activate");

test(
  "validate passes against an OpenAI-style upstream with the BYOK key; " + "activate; an active endpoint is frozen",
  async (ctx) => {
    const { id } = await newEndpoint(ctx, { upstream_model_id: "gpt-pass" });
    const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
    const checks = checksOf(res);
    assert.is(at(res.body, "data", "passed"), true);
    for (const check of checks) assert.equal(check, { name: check.name, passed: true, message: null });
    assertNoLeak(res, ctx);

    const sent = requestsFor(ctx.upstream, "gpt-pass");
    assert.is(sent.length, 1);
    assert.is(sent[0]!.method, "POST");
    assert.is(sent[0]!.path, "/v1/chat/completions");
    assert.is(sent[0]!.authorization, `Bearer ${ctx.openaiKey}`, "the workspace's BYOK key was sent");
    assert.equal(sent[0]!.body, { model: "gpt-pass", messages: [{ role: "user", content: "ping" }], max_tokens: 1 });

    const validated = at((await getEndpoint(ctx.gw, ctx.org.key, String(id))).body, "data") as Json;
    assert.match(String(validated.validated_at), ISO);
    assert.is(validated.status, "draft");

    const activated = await activate(ctx.gw, ctx.org.key, String(id));
    assert.is(activated.status, 200, activated.text);
    assert.is(at(activated.body, "data", "status"), "active");
    assert.is(at(activated.body, "data", "validated_at"), validated.validated_at);
    const listed = (
      at((await call(ctx.gw.url, "GET", "/api/v1/private-endpoints", { key: ctx.org.key })).body, "data") as Json[]
    ).find((e) => e.id === id);
    assert.is(listed?.status, "active");

    assertError(
      await patchEndpoint(ctx.gw, ctx.org.key, String(id), { upstream_model_id: "gpt-other" }),
      409,
      /active/,
    );
    assertError(
      await patchEndpoint(ctx.gw, ctx.org.key, String(id), { upstream_model_id: "gpt-pass" }),
      409,
      /active/,
      "even a no-op",
    );
    assertError(await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId), 409, /active/);
    assertError(await activate(ctx.gw, ctx.org.key, String(id)), 409, /already active/);
    assert.is(requestsFor(ctx.upstream, "gpt-pass").length, 1, "an active endpoint is not probed again");

    const deleted = await call(ctx.gw.url, "DELETE", `/api/v1/private-endpoints/${id}`, { key: ctx.org.key });
    assert.equal(deleted.body, { deleted: true }, "an active endpoint can be deleted");
  },
);

test("validate speaks the Anthropic messages API with x-api-key for an Anthropic endpoint", async (ctx) => {
  const { id } = await newEndpoint(ctx, {
    model_permaslug: "anthropic/claude-test",
    provider_slug: "anthropic",
    upstream_model_id: "claude-pass",
    base_url: ctx.upstream.url,
  });
  const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
  checksOf(res);
  assert.is(at(res.body, "data", "passed"), true, res.text);
  const [sent] = requestsFor(ctx.upstream, "claude-pass");
  assert.is(sent?.path, "/v1/messages");
  assert.is(sent?.apiKey, ctx.anthropicKey);
  assert.is(sent?.anthropicVersion, "2023-06-01");
  assert.is(sent?.authorization, undefined);
  assert.equal(sent?.body, { model: "claude-pass", messages: [{ role: "user", content: "ping" }], max_tokens: 1 });
});

test("validate fails at credential without an enabled credential of the provider in the workspace", async (ctx) => {
  const created = await call(ctx.gw.url, "POST", "/api/v1/workspaces", {
    key: ctx.org.key,
    body: { name: "No keys", slug: "pe-no-keys" },
  });
  assert.is(created.status, 201, created.text);
  const workspaceId = at(created.body, "data", "id") as string;
  await addCredential(ctx.gw, ctx.org.key, {
    provider: "openai",
    key: "sk-disabled-0123456789",
    workspace_id: workspaceId,
    disabled: true,
  });
  await addCredential(ctx.gw, ctx.org.key, { provider: "groq", key: "sk-groq-0123456789", workspace_id: workspaceId });
  const { id } = await newEndpoint(ctx, { upstream_model_id: "gpt-no-credential" });
  const res = await validate(ctx.gw, ctx.org.key, String(id), workspaceId);
  assertFailsAt(res, "credential", /no enabled OpenAI BYOK credential in workspace 'pe-no-keys'/);
  assert.is(requestsFor(ctx.upstream, "gpt-no-credential").length, 0, "nothing was sent upstream");
});

test(
  "validate failures report status codes and generic wording, " + "never upstream text or the credential",
  async (ctx) => {
    const cases: Array<[string, string, RegExp]> = [
      ["mock-unauthorized", "auth_ok", /^upstream rejected the credential \(HTTP 401\)$/],
      ["mock-server-error", "model_ok", /^upstream answered HTTP 500$/],
      ["mock-redirect", "model_ok", /^upstream answered HTTP 302; redirects are not followed$/],
      ["mock-wrong-shape", "model_ok", /^the response is not an OpenAI chat completion/],
      ["mock-huge", "model_ok", /larger than 64 KiB/],
      ["mock-hang", "reachable", /^timed out: no complete HTTP response within 1000 ms$/],
    ];
    for (const [model, failing, message] of cases) {
      const { id } = await newEndpoint(ctx, { upstream_model_id: model });
      const res = await validate(ctx.gw, ctx.org.key, String(id), ctx.org.workspaceId);
      assertFailsAt(res, failing, message);
      assertNoLeak(res, ctx);
      assert.is(requestsFor(ctx.upstream, model).length, 1, `${model}: one request, no redirect followed, no retry`);
      assert.is(at((await getEndpoint(ctx.gw, ctx.org.key, String(id))).body, "data", "validated_at"), null, model);
      assertError(await activate(ctx.gw, ctx.org.key, String(id)), 409, /validat/, model);
    }
  },
);

test("validate: 404 for another organization's workspace, 400 without a workspace_id", async (ctx) => {
  const { id } = await newEndpoint(ctx);
  assertError(await validate(ctx.gw, ctx.org.key, String(id), ctx.other.workspaceId), 404, /Workspace/);
  assertError(await validate(ctx.gw, ctx.org.key, String(id), UNKNOWN_ID), 404, /Workspace/);
  assertError(
    await call(ctx.gw.url, "POST", `/api/v1/private-endpoints/${id}/validate`, { key: ctx.org.key, body: {} }),
    400,
    /workspace_id/,
  );
  assertError(await validate(ctx.gw, ctx.org.key, String(id), "default"), 400, /workspace_id must be a UUID/);
});

test(
  "activate: 409 when never validated, and when changed after validation; " +
    "a failing re-validation withdraws the pass",
  async (ctx) => {
    const never = await newEndpoint(ctx);
    assertError(await activate(ctx.gw, ctx.org.key, String(never.id)), 409, /has not passed validation/);
    assert.is(at((await getEndpoint(ctx.gw, ctx.org.key, String(never.id))).body, "data", "status"), "draft");

    const changed = await newEndpoint(ctx, { upstream_model_id: "gpt-changed" });
    assert.is(
      at((await validate(ctx.gw, ctx.org.key, String(changed.id), ctx.org.workspaceId)).body, "data", "passed"),
      true,
    );
    const patched = await patchEndpoint(ctx.gw, ctx.org.key, String(changed.id), {
      upstream_model_id: "gpt-changed",
      declared_zdr: true,
    });
    assert.is(at(patched.body, "data", "validated_at"), null);
    assertError(await activate(ctx.gw, ctx.org.key, String(changed.id)), 409, /has not passed validation/);

    // Passing again, then failing (the credential is gone): the earlier pass no longer counts.
    const org = await seedOrganization("pe-withdrawn", ["private_endpoints"]);
    const credential = await addCredential(ctx.gw, org.key, { provider: "openai", key: "sk-withdrawn-0123456789" });
    const created = await createEndpoint(ctx.gw, org.key, endpointBody(ctx.upstream));
    const id = at(created.body, "data", "id") as string;
    assert.is(at((await validate(ctx.gw, org.key, id, org.workspaceId)).body, "data", "passed"), true);
    await call(ctx.gw.url, "DELETE", `/api/v1/byok/${credential}`, { key: org.key });
    assertFailsAt(await validate(ctx.gw, org.key, id, org.workspaceId), "credential", /no enabled OpenAI/);
    assert.is(at((await getEndpoint(ctx.gw, org.key, id)).body, "data", "validated_at"), null);
    assertError(await activate(ctx.gw, org.key, id), 409, /has not passed validation/);
  },
);

test.run();
