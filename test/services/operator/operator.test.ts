import { execFile } from "node:child_process";
import path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ListOrganizationsResponseSchema, OperatorService } from "../../../gen/gateway/v1/operator_pb.js";
import { httpErrorOf } from "../../../wire/errors.js";
import { at, call } from "../../support/http.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { runAdmin } from "../../../cmd/admin-command.js";

const ROOT = path.resolve(import.meta.dirname, "../../..");

interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
  json: unknown;
}

/** The admin command run in-process against the test gateway's gRPC port (its process is `cli` below). */
async function admin(gw: TestGateway, args: string[], token = gw.operatorToken): Promise<AdminRun> {
  let stdout = "";
  let stderr = "";
  const env = { GATEWAY_GRPC_URL: gw.grpcUrl, GATEWAY_OPERATOR_TOKEN: token };
  const code = await runAdmin(args, env, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr, json: jsonOf(stdout) };
}

/** `npm run admin -- …` as an operator runs it: a process of its own, whose exit status is the answer. */
function cli(gw: TestGateway, args: string[], token = gw.operatorToken): Promise<AdminRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "cmd/admin.ts", ...args],
      { cwd: ROOT, env: { ...process.env, GATEWAY_GRPC_URL: gw.grpcUrl, GATEWAY_OPERATOR_TOKEN: token } },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : 1) : 0,
          stdout,
          stderr,
          json: jsonOf(stdout),
        }),
    );
  });
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const test = suite<{ gw: TestGateway }>("operator");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const internsStatus = async (gw: TestGateway, key: string) =>
  (await call(gw.url, "GET", "/api/v1/interns", { key })).status;
const privateEndpointsStatus = async (gw: TestGateway, key: string) =>
  (await call(gw.url, "GET", "/api/v1/private-endpoints", { key })).status;

test("from a fresh install the admin command reaches every entitlement state", async ({ gw }) => {
  // The organizations the other tests made, whichever ran before.
  const before = (at((await admin(gw, ["org", "list"])).json, "data") as unknown[]).length;
  const created = await admin(gw, ["org", "create", "Acme"]);
  assert.is(created.code, 0, created.stderr);
  const orgId = at(created.json, "data", "id") as string;
  const key = at(created.json, "key") as string;
  assert.match(key, /^sk-gw-v1-/);
  assert.equal(at(created.json, "data", "entitlements"), undefined, "no entitlement yet (empty lists are omitted)");

  assert.is(await internsStatus(gw, key), 404, "outside the interns programme the routes do not exist");
  assert.is(await privateEndpointsStatus(gw, key), 403, "without the private endpoints entitlement");

  const interns = await admin(gw, ["entitlement", "grant", orgId, "interns"]);
  assert.is(interns.code, 0, interns.stderr);
  assert.equal(at(interns.json, "data", "entitlements"), ["ENTITLEMENT_INTERNS"]);
  assert.is.not(await internsStatus(gw, key), 404, "inside the programme");
  assert.is(await privateEndpointsStatus(gw, key), 403);

  const both = await admin(gw, ["entitlement", "grant", orgId, "private-endpoints"]);
  assert.equal(at(both.json, "data", "entitlements"), ["ENTITLEMENT_INTERNS", "ENTITLEMENT_PRIVATE_ENDPOINTS"]);
  assert.is(await privateEndpointsStatus(gw, key), 200);

  const again = await admin(gw, ["entitlement", "grant", orgId, "private-endpoints"]);
  assert.equal(
    at(again.json, "data", "entitlements"),
    ["ENTITLEMENT_INTERNS", "ENTITLEMENT_PRIVATE_ENDPOINTS"],
    "granting twice changes nothing",
  );

  const revoked = await admin(gw, ["entitlement", "revoke", orgId, "interns"]);
  assert.equal(at(revoked.json, "data", "entitlements"), ["ENTITLEMENT_PRIVATE_ENDPOINTS"]);
  assert.is(await internsStatus(gw, key), 404);

  const listed = await admin(gw, ["org", "list"]);
  const ids = (at(listed.json, "data") as Array<{ id: string }>).map((o) => o.id);
  assert.ok(ids.includes(orgId));
  assert.is(ids.length, before + 1, "the organizations there were, and Acme");
});

test("members and their keys; a key whose creator is removed stops working", async ({ gw }) => {
  const org = await admin(gw, ["org", "create", "Members Inc", "--interns"]);
  const orgId = at(org.json, "data", "id") as string;
  const member = await admin(gw, ["member", "add", orgId, "bob@example.com", "--first-name", "Bob", "--role", "admin"]);
  assert.is(member.code, 0, member.stderr);
  const userId = at(member.json, "data", "id") as string;
  assert.is(at(member.json, "data", "role"), "MEMBER_ROLE_ADMIN");

  const minted = await admin(gw, ["key", "create", orgId, "bob's key", "--member", userId, "--limit", "5"]);
  assert.is(minted.code, 0, minted.stderr);
  const key = at(minted.json, "key") as string;
  const own = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(own.status, 200, own.text);
  assert.is(at(own.body, "data", "creator_user_id"), userId);
  assert.is(at(own.body, "data", "organization_id"), orgId);
  assert.is(at(own.body, "data", "limit"), 5);
  assert.is(at(own.body, "data", "is_management_key"), false);

  const members = await admin(gw, ["member", "list", orgId]);
  assert.is(at(members.json, "total_count"), 2, "the owner and Bob");

  const removed = await admin(gw, ["member", "remove", orgId, userId]);
  assert.is(removed.code, 0, removed.stderr);
  const refused = await call(gw.url, "GET", "/api/v1/key", { key });
  assert.is(refused.status, 401, refused.text);
  assert.match(String(at(refused.body, "error", "message")), /disabled/);
  const stale = await admin(gw, ["key", "create", orgId, "late", "--member", userId]);
  assert.is(stale.code, 1, "a removed member can no longer own new keys");
  assert.match(stale.stderr, /400 .*not a member/);
});

test(
  "an organization starts with its owner: its first key and keys minted without --member belong to it; " +
    "it cannot be removed",
  async ({ gw }) => {
    const org = await admin(gw, ["org", "create", "Owned", "--owner-email", "founder@example.com"]);
    assert.is(org.code, 0, org.stderr);
    const orgId = at(org.json, "data", "id") as string;
    const members = await admin(gw, ["member", "list", orgId]);
    assert.is(at(members.json, "total_count"), 1);
    const owner = at(members.json, "data", 0) as { id: string; email: string; role: string };
    assert.is(owner.email, "founder@example.com");
    assert.is(owner.role, "MEMBER_ROLE_ADMIN");
    const first = await call(gw.url, "GET", "/api/v1/key", { key: at(org.json, "key") as string });
    assert.is(at(first.body, "data", "creator_user_id"), owner.id, "the organization's first key");
    const minted = await admin(gw, ["key", "create", orgId, "no member named"]);
    assert.is(minted.code, 0, minted.stderr);
    assert.is(at(minted.json, "data", "creator_user_id"), owner.id, "a key minted for no member");
    const removed = await admin(gw, ["member", "remove", orgId, owner.id]);
    assert.is(removed.code, 1);
    assert.match(removed.stderr, /409 .*owner/);

    const byDefault = await admin(gw, ["org", "create", "Default owner"]);
    const defaultMembers = await admin(gw, ["member", "list", at(byDefault.json, "data", "id") as string]);
    assert.is(at(defaultMembers.json, "data", 0, "email"), "owner@localhost", "GATEWAY_OWNER_EMAIL's default");
  },
);

test("the command's process: its output and its exit status (0, 2 for bad usage, 1 for a gateway error)", async ({
  gw,
}) => {
  const listed = await cli(gw, ["org", "list"]);
  assert.is(listed.code, 0, listed.stderr);
  assert.ok((at(listed.json, "data") as unknown[]).length >= 1, listed.stdout);
  const [usage, refused] = await Promise.all([
    cli(gw, ["org", "frobnicate"]),
    cli(gw, ["org", "list"], "not-the-token"),
  ]);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /unknown command/);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /^admin: 401 /);
});

test("errors: bad usage is status 2, gateway errors status 1 with their HTTP status", async ({ gw }) => {
  const usage = await admin(gw, ["org", "frobnicate"]);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /unknown command/);
  const unknownOrg = await admin(gw, ["member", "list", "3f1c2a4e-8b7d-4c6e-9a51-0d2e7f3b6c18"]);
  assert.is(unknownOrg.code, 1);
  assert.match(unknownOrg.stderr, /^admin: 404 /);
  const badToken = await admin(gw, ["org", "list"], "not-the-token");
  assert.is(badToken.code, 1);
  assert.match(badToken.stderr, /^admin: 401 /);
});

test("OperatorService refuses API keys, even management keys, and has no REST route", async ({ gw }) => {
  const client = createClient(OperatorService, createGrpcTransport({ baseUrl: gw.grpcUrl }));
  for (const authorization of [`Bearer ${gw.key}`, undefined]) {
    const err = await client.listOrganizations({}, { headers: authorization ? { authorization } : {} }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    assert.ok(err, "the call must fail");
    assert.is(httpErrorOf(err).status, 401);
  }
  const listed = await client.listOrganizations({}, { headers: { authorization: `Bearer ${gw.operatorToken}` } });
  assert.ok(listed.data.length >= 1);
  assert.not.match(toJsonString(ListOrganizationsResponseSchema, listed), /sk-gw-v1-/, "listing never shows a key");
  const rest = await call(gw.url, "POST", "/api/v1/gateway.v1.OperatorService/ListOrganizations", {
    key: gw.key,
    body: {},
  });
  assert.is(rest.status, 404);
});

test.run();
