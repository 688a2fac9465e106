import { hashKey, maskKey, newKeySecret } from "../../server/platform/secrets/key-secret.js";
import { ApiKeyRow, WorkspaceRow } from "../../server/platform/db/models.js";
import { createWorkspaceRow } from "../../server/services/workspaces/workspace-store.js";
import { writeCatalogFile } from "./catalog-file.js";
import { eventually } from "./eventually.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { at, call, type Reply } from "./http.js";
import { TestInternHosts } from "./interns-hosts.js";
import { seedOrganization } from "./seed.js";

/**
 * A gateway for the intern records, daemon and vault suites: the test InternHosts (real tiny HTTP
 * servers), a catalog with one model (`mock/chat`) and one regional hostname (`eu.gateway.test`),
 * an organization in the interns programme with two workspaces and one outside it.
 */
export const REGIONAL_HOST = "eu.gateway.test";
export const CATALOG_MODEL = "mock/chat";

export interface Workspace {
  workspaceId: string;
  /** A management key of the workspace. */
  key: string;
}

export interface InternsEnv {
  gw: TestGateway;
  hosts: TestInternHosts;
  organizationId: string;
  /** The entitled organization's default workspace. */
  main: Workspace;
  /** A second workspace of the same organization. */
  second: Workspace;
  /** An organization outside the interns programme. */
  outsider: Workspace;
  stop(): Promise<void>;
}

export async function startInternsGateway(env: Record<string, string> = {}): Promise<InternsEnv> {
  const catalog = await writeCatalogFile({
    providers: [{ slug: "mockai", kind: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "" }],
    models: [
      {
        id: CATALOG_MODEL,
        name: "Mock: Chat",
        context_length: 8000,
        endpoints: [
          { provider: "mockai", upstream_model_id: "chat-a", pricing: { prompt: "0.000001", completion: "0.000002" } },
        ],
      },
    ],
    regional_hosts: { [REGIONAL_HOST]: "europe" },
  });
  const hosts = new TestInternHosts();
  const gw = await startTestGateway({ GATEWAY_CONFIG: catalog, ...env }, { internHosts: hosts });
  const org = await seedOrganization("interns-org", ["interns"]);
  const second = await seedWorkspace(org.organizationId, "second");
  const outsider = await seedOrganization("outsider-org");
  return {
    gw,
    hosts,
    organizationId: org.organizationId,
    main: { workspaceId: org.workspaceId, key: org.key },
    second,
    outsider: { workspaceId: outsider.workspaceId, key: outsider.key },
    stop: () => gw.stop(),
  };
}

/** Another workspace of an organization, with a management key of its own. */
export async function seedWorkspace(organizationId: string, slug: string): Promise<Workspace> {
  const workspace = await WorkspaceRow.sequelize!.transaction((transaction) =>
    createWorkspaceRow({ organizationId, name: `Workspace ${slug}`, slug, createdBy: "test" }, transaction),
  );
  return { workspaceId: workspace.id, key: await seedKey(organizationId, workspace.id, { isManagement: true }) };
}

export async function seedKey(
  organizationId: string,
  workspaceId: string,
  options: { isManagement?: boolean; creatorUserId?: string } = {},
): Promise<string> {
  const key = newKeySecret();
  await ApiKeyRow.create({
    hash: hashKey(key),
    organizationId,
    workspaceId,
    name: "seeded",
    label: maskKey(key),
    isManagement: options.isManagement ?? false,
    creatorUserId: options.creatorUserId ?? null,
  });
  return key;
}

export type Json = Record<string, unknown>;

export function createIntern(env: InternsEnv, body: Json, workspace: Workspace = env.main): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/interns", {
    key: workspace.key,
    body: { workspace_id: workspace.workspaceId, ...body },
  });
}

/** Creates an intern and answers its record; fails the test on anything but 201. */
export async function createdIntern(env: InternsEnv, body: Json, workspace: Workspace = env.main): Promise<Json> {
  const res = await createIntern(env, body, workspace);
  if (res.status !== 201) throw new Error(`POST /interns answered ${res.status}: ${res.text}`);
  return at(res.body, "data") as Json;
}

/** Reads the intern until `until` holds for it (or it is gone, when `until` is "gone"). */
export function waitForIntern(
  env: InternsEnv,
  id: string,
  until: ((intern: Json) => boolean) | "gone",
  key = env.main.key,
): Promise<Json | undefined> {
  return waitForInternAt(env.gw.url, key, id, until);
}

export async function waitForInternAt(
  url: string,
  key: string,
  id: string,
  until: ((intern: Json) => boolean) | "gone",
): Promise<Json | undefined> {
  const reached = (res: Reply): boolean =>
    until === "gone" ? res.status === 404 : res.status === 200 && until(at(res.body, "data") as Json);
  const res = await eventually(
    () => call(url, "GET", `/api/v1/interns/${id}`, { key }),
    until === "gone" ? `intern ${id} is gone` : `intern ${id} reaches the awaited state`,
    { until: reached },
  );
  return res.status === 200 ? (at(res.body, "data") as Json) : undefined;
}

export const hasStatus = (status: string) => (intern: Json) => at(intern, "status") === status;

/** Creates and provisions an intern and waits until it runs. */
export async function runningIntern(env: InternsEnv, name: string, workspace: Workspace = env.main): Promise<Json> {
  const created = await createdIntern(env, { name, provision: true }, workspace);
  return (await waitForIntern(env, created.id as string, hasStatus("running"), workspace.key))!;
}
