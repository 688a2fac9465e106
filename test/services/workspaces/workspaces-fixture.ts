import type { Test } from "uvu";
import * as assert from "uvu/assert";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call, type Reply } from "../../support/http.js";
import { suite } from "../../support/suite.js";

/** What the workspace suites share: workspaces with fresh slugs, a key that is not a management key, error checks. */
export type Json = Record<string, unknown>;
/** A workspace as the API answers it. */
export type Workspace = Json & { id: string; slug: string };

export interface WorkspacesContext {
  gw: TestGateway;
  /** The organization of the gateway's management key, and its default workspace. */
  organizationId: string;
  defaultWorkspaceId: string;
}

/** A suite of the workspace routes with its own test gateway, started before its tests and stopped after. */
export function workspacesSuite(title: string): Test<WorkspacesContext> {
  const test = suite<WorkspacesContext>(title);
  test.before(async (ctx) => {
    ctx.gw = await startTestGateway();
    const own = await call(ctx.gw.url, "GET", "/api/v1/key", { key: ctx.gw.key });
    ctx.organizationId = at(own.body, "data", "organization_id") as string;
    ctx.defaultWorkspaceId = at(own.body, "data", "workspace_id") as string;
  });
  test.after(async (ctx) => {
    await ctx.gw.stop();
  });
  return test;
}

let counter = 0;
export const uniqueSlug = (prefix: string) => `${prefix}-${++counter}`;

export const createWorkspace = (gw: TestGateway, body: Json, key = gw.key) =>
  call(gw.url, "POST", "/api/v1/workspaces", { key, body });

/** A workspace named after a fresh slug, with `extra` fields, created by `key`. */
export async function newWorkspace(
  gw: TestGateway,
  prefix: string,
  extra: Json = {},
  key = gw.key,
): Promise<Workspace> {
  const slug = uniqueSlug(prefix);
  const res = await createWorkspace(gw, { name: `Workspace ${slug}`, slug, ...extra }, key);
  assert.is(res.status, 201, res.text);
  return at(res.body, "data") as Workspace;
}

/** A key that is not a management key, of `workspaceId` or of the organization's default workspace. */
export async function plainKey(gw: TestGateway, workspaceId?: string): Promise<string> {
  const res = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "plain", ...(workspaceId ? { workspace_id: workspaceId } : {}) },
  });
  assert.is(res.status, 201, res.text);
  return at(res.body, "key") as string;
}

export function assertError(res: Reply, status: number, message?: RegExp, context = ""): void {
  assert.is(res.status, status, `${context} ${res.text}`);
  assert.is(at(res.body, "error", "code"), status, context);
  assert.type(at(res.body, "error", "message"), "string");
  if (message) assert.match(String(at(res.body, "error", "message")), message, context);
}
