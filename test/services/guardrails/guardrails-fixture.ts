import type { Test } from "uvu";
import * as assert from "uvu/assert";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { seedOrganization } from "../../support/seed.js";
import { suite } from "../../support/suite.js";

export interface GuardrailsContext {
  gw: TestGateway;
  /** Another organization, whose guardrails, keys, members and workspaces the bootstrap one must not reach. */
  other: { key: string; workspaceId: string };
}

/** A suite of the guardrail routes with its own test gateway, started before its tests and stopped after. */
export function guardrailsSuite(title: string): Test<GuardrailsContext> {
  const test = suite<GuardrailsContext>(title);
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    ctx.other = await seedOrganization("guardrails-other-org");
  });
  test.after(async (ctx) => {
    await ctx.gw.stop();
  });
  return test;
}

/** An id no guardrail has. */
export const MISSING_ID = "00000000-0000-4000-8000-000000000000";

export const GUARDRAIL_FIELDS = [
  "id",
  "name",
  "description",
  "workspace_id",
  "created_at",
  "updated_at",
  "limit_usd",
  "reset_interval",
  "include_byok_in_budgets",
  "allowed_models",
  "ignored_models",
  "allowed_providers",
  "ignored_providers",
  "allowed_data_regions",
  "enforce_zdr",
  "enforce_zdr_anthropic",
  "enforce_zdr_google",
  "enforce_zdr_openai",
  "enforce_zdr_other",
  "enforce_zdr_xai",
  "enable_free_model_publication",
  "enable_free_model_training",
  "enable_paid_model_training",
  "content_filter_builtins",
  "content_filters",
];

export type Json = Record<string, unknown>;

export const createGuardrail = (gw: TestGateway, body: Json, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/guardrails", { key, body });
export const getGuardrail = (gw: TestGateway, id: string, key = gw.key) =>
  call(gw.url, "GET", `/api/v1/guardrails/${id}`, { key });
export const patchGuardrail = (gw: TestGateway, id: string, body: Json, key = gw.key) =>
  call(gw.url, "PATCH", `/api/v1/guardrails/${id}`, { key, body });
export const assignKeys = (gw: TestGateway, id: string, keyHashes: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/keys`, { key, body: { key_hashes: keyHashes } });
export const unassignKeys = (gw: TestGateway, id: string, keyHashes: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/keys/remove`, { key, body: { key_hashes: keyHashes } });
export const assignMembers = (gw: TestGateway, id: string, memberUserIds: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/members`, {
    key,
    body: { member_user_ids: memberUserIds },
  });
export const unassignMembers = (gw: TestGateway, id: string, memberUserIds: unknown, key = gw.key) =>
  call(gw.url, "POST", `/api/v1/guardrails/${id}/assignments/members/remove`, {
    key,
    body: { member_user_ids: memberUserIds },
  });

export async function newGuardrail(gw: TestGateway, body: Json = {}, key = gw.key): Promise<Json> {
  const res = await createGuardrail(gw, { name: "guardrail", ...body }, key);
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Json;
}

/** A key of the bootstrap organization: its secret and its hash. */
export async function newKey(
  gw: TestGateway,
  body: Json = {},
): Promise<{ secret: string; hash: string; label: string; name: string }> {
  const res = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "plain", ...body } });
  assert.is(res.status, 201, res.text);
  return {
    secret: at(res.body, "key") as string,
    hash: at(res.body, "data", "hash") as string,
    label: at(res.body, "data", "label") as string,
    name: at(res.body, "data", "name") as string,
  };
}

let memberCounter = 0;
export async function newMember(gw: TestGateway): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/organization/members", {
    key: gw.key,
    body: { email: `guard-${++memberCounter}@example.com` },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

export async function newWorkspace(gw: TestGateway, slug: string, body: Json = {}, key = gw.key): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key, body: { name: slug, slug, ...body } });
  assert.is(res.status, 201, res.text);
  return at(res.body, "data", "id") as string;
}

export async function callerWorkspace(gw: TestGateway, key = gw.key): Promise<string> {
  const res = await call(gw.url, "GET", "/api/v1/key", { key });
  return at(res.body, "data", "workspace_id") as string;
}

export function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}
