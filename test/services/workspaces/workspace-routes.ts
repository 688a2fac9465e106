import * as assert from "uvu/assert";
import type { TestGateway } from "../../support/gateway.js";
import { call } from "../../support/http.js";
import { WORKSPACE_FIELDS } from "../../support/shapes.js";
import type { Json } from "./workspaces-fixture.js";

/** An id no workspace has. */
export const MISSING_UUID = "00000000-0000-4000-8000-000000000000";

/** One workspace's route, by id or slug; the calls below read, change and delete it and its budgets. */
export const path = (ref: string) => `/api/v1/workspaces/${encodeURIComponent(ref)}`;
export const getWorkspace = (gw: TestGateway, ref: string, key = gw.key) => call(gw.url, "GET", path(ref), { key });
export const patchWorkspace = (gw: TestGateway, ref: string, body: unknown, key = gw.key) =>
  call(gw.url, "PATCH", path(ref), { key, body });
export const deleteWorkspace = (gw: TestGateway, ref: string, key = gw.key) =>
  call(gw.url, "DELETE", path(ref), { key });
export const listWorkspaces = (gw: TestGateway, query = "", key = gw.key) =>
  call(gw.url, "GET", `/api/v1/workspaces${query}`, { key });
export const putBudget = (gw: TestGateway, ref: string, interval: string, limit_usd: number) =>
  call(gw.url, "PUT", `${path(ref)}/budgets/${interval}`, { key: gw.key, body: { limit_usd } });
export const getBudget = (gw: TestGateway, ref: string, interval: string, key = gw.key) =>
  call(gw.url, "GET", `${path(ref)}/budgets/${interval}`, { key });
export const listBudgets = (gw: TestGateway, ref: string, key = gw.key) =>
  call(gw.url, "GET", `${path(ref)}/budgets`, { key });

/** Every field a workspace answer carries is there. */
export function assertAllFields(data: Json): void {
  for (const field of WORKSPACE_FIELDS) assert.ok(field in data, `missing ${field}`);
}
