import * as assert from "uvu/assert";
import { call, type Reply } from "../../support/http.js";
import {
  createdIntern,
  createIntern,
  hasStatus,
  runningIntern,
  startInternsGateway,
  waitForIntern,
  type InternsEnv,
  type Workspace,
} from "../../support/interns.js";
import { seedOrganization } from "../../support/seed.js";
import { suite } from "../../support/suite.js";

/**
 * How many interns may be provisioning or running at once: per organization
 * (GATEWAY_INTERN_MAX_RUNNING_PER_ORG) and per gateway instance (…_PER_INSTANCE). Provisioning
 * past either answers 429 `intern_limit` in the error envelope, naming the limit.
 */
const provision = (env: InternsEnv, id: string, workspace: Workspace = env.main): Promise<Reply> =>
  call(env.gw.url, "POST", `/api/v1/interns/${id}/provision`, { key: workspace.key });
const suspend = (env: InternsEnv, id: string, workspace: Workspace = env.main): Promise<Reply> =>
  call(env.gw.url, "POST", `/api/v1/interns/${id}/suspend`, { key: workspace.key });

function assertCapped(res: Reply, retryable: boolean, limit: RegExp): void {
  assert.is(res.status, 429, res.text);
  assert.equal(Object.keys(res.body as object), ["error"]);
  const error = (
    res.body as { error: { code: number; message: string; metadata: { reason: string; retryable: boolean } } }
  ).error;
  assert.is(error.code, 429);
  assert.equal(error.metadata, { reason: "intern_limit", retryable });
  assert.match(error.message, limit);
}

const perOrg = suite<{ env: InternsEnv }>("interns: running interns per organization");
perOrg.before(async (context) => {
  context.env = await startInternsGateway({
    GATEWAY_INTERN_MAX_RUNNING_PER_ORG: "2",
    GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE: "0",
  });
});
perOrg.after(async ({ env }) => {
  await env.stop();
});

perOrg(
  "past the organization's cap (over all its workspaces), provisioning answers 429 intern_limit, not retryable; " +
    "a suspend makes room",
  async ({ env }) => {
    const first = await runningIntern(env, "capped-1");
    await runningIntern(env, "capped-2", env.second);
    const third = await createdIntern(env, { name: "capped-3" });
    const refused = await provision(env, third.id as string);
    assertCapped(refused, false, /organization's limit of 2 interns provisioning or running/);
    assert.is(
      (
        (await call(env.gw.url, "GET", `/api/v1/interns/${third.id}`, { key: env.main.key })).body as {
          data: { status: string };
        }
      ).data.status,
      "queued",
      "nothing changed",
    );

    // Created with `provision: true` past the cap: refused as a whole, nothing is created.
    const created = await createIntern(env, { name: "capped-4", provision: true });
    assertCapped(created, false, /GATEWAY_INTERN_MAX_RUNNING_PER_ORG/);

    assert.is((await suspend(env, first.id as string)).status, 200);
    assert.is((await provision(env, third.id as string)).status, 200);
    await waitForIntern(env, third.id as string, hasStatus("running"));
  },
);

perOrg("provisionings racing each other are counted one after the other: the cap holds", async ({ env }) => {
  const org = await seedOrganization("racing-org", ["interns"]);
  const workspace = { workspaceId: org.workspaceId, key: org.key };
  const interns = await Promise.all([1, 2, 3, 4, 5].map((n) => createdIntern(env, { name: `racer-${n}` }, workspace)));
  const answers = await Promise.all(interns.map((intern) => provision(env, intern.id as string, workspace)));
  assert.equal(answers.map((res) => res.status).sort(), [200, 200, 429, 429, 429]);
});

perOrg.run();

const perInstance = suite<{ env: InternsEnv }>("interns: running interns per gateway instance");
perInstance.before(async (context) => {
  context.env = await startInternsGateway({ GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE: "2" });
});
perInstance.after(async ({ env }) => {
  await env.stop();
});

perInstance(
  "past the instance's cap (over all organizations), provisioning answers 429 intern_limit, retryable; " +
    "a suspend makes room",
  async ({ env }) => {
    const other = await seedOrganization("second-interns-org", ["interns"]);
    const elsewhere = { workspaceId: other.workspaceId, key: other.key };
    const first = await runningIntern(env, "instance-1");
    await runningIntern(env, "instance-2", elsewhere);
    const third = await createdIntern(env, { name: "instance-3" });
    assertCapped(
      await provision(env, third.id as string),
      true,
      /instance runs its limit of 2 interns at once \(GATEWAY_INTERN_MAX_RUNNING_PER_INSTANCE\)/,
    );
    assert.is((await suspend(env, first.id as string)).status, 200);
    assert.is((await provision(env, third.id as string)).status, 200);
    await waitForIntern(env, third.id as string, hasStatus("running"));
  },
);

perInstance.run();
