import { randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { BatchesService } from "../../gen/gateway/v1/batches_pb.js";
import { ErrorDetailSchema } from "../../gen/gateway/v1/errors_pb.js";
import { InternsService } from "../../gen/gateway/v1/interns_pb.js";
import { KeysService } from "../../gen/gateway/v1/keys_pb.js";
import { WorkspacesService } from "../../gen/gateway/v1/workspaces_pb.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { bearer, createGrpcClient, grpcFailure, type GrpcClient } from "../support/grpc-client.js";
import { at, call } from "../support/http.js";
import { seedOrganization } from "../support/seed.js";

interface Context {
  gw: TestGateway;
  keys: GrpcClient;
  workspaces: GrpcClient;
  batches: GrpcClient;
  interns: GrpcClient;
}

const test = suite<Context>("grpc-js against the core (h2c)");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.keys = createGrpcClient(KeysService, ctx.gw.grpcUrl);
  ctx.workspaces = createGrpcClient(WorkspacesService, ctx.gw.grpcUrl);
  ctx.batches = createGrpcClient(BatchesService, ctx.gw.grpcUrl);
  ctx.interns = createGrpcClient(InternsService, ctx.gw.grpcUrl);
});
test.after(async (ctx) => {
  for (const client of [ctx.keys, ctx.workspaces, ctx.batches, ctx.interns]) client?.close();
  await ctx.gw?.stop();
});

test("GetCurrentKey answers what REST GET /api/v1/key answers", async ({ gw, keys }) => {
  const reply = await keys.unary(KeysService.method.getCurrentKey, {}, bearer(gw.key));
  const rest = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(rest.status, 200);
  assert.ok(reply.data, "the response carries data");
  assert.is(reply.data.label, at(rest.body, "data", "label"));
  assert.is(reply.data.workspaceId, at(rest.body, "data", "workspace_id"));
  assert.is(reply.data.isManagementKey, at(rest.body, "data", "is_management_key"));
  assert.is(reply.data.isManagementKey, true);
  assert.match(reply.data.label, /^sk-gw-v1-[0-9a-f]{3}\.\.\.[0-9a-f]{3}$/);
});

test("CreateWorkspace creates; a duplicate slug is ABORTED with http_status 409", async ({ gw, workspaces }) => {
  const created = await workspaces.unary(
    WorkspacesService.method.createWorkspace,
    { name: "Over gRPC", slug: "over-grpc" },
    bearer(gw.key),
  );
  assert.is(created.data?.slug, "over-grpc");
  assert.is(created.data?.name, "Over gRPC");
  assert.match(created.data?.id ?? "", /^[0-9a-f-]{36}$/);

  const overRest = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "Over REST", slug: "over-grpc" },
  });
  assert.is(overRest.status, 409, "REST sees the workspace created over gRPC");

  const duplicate = await grpcFailure(
    workspaces.unary(WorkspacesService.method.createWorkspace, { name: "Again", slug: "over-grpc" }, bearer(gw.key)),
  );
  assert.is(duplicate.code, status.ABORTED, duplicate.message);
  assert.ok(
    duplicate.detail,
    `an ErrorDetail travels in grpc-status-details-bin (got ${duplicate.detailTypes.join(", ") || "none"})`,
  );
  assert.is(duplicate.detail.httpStatus, 409);
});

test("invalid input is INVALID_ARGUMENT with http_status 400 and names the field", async ({ gw, workspaces }) => {
  const failure = await grpcFailure(
    workspaces.unary(WorkspacesService.method.createWorkspace, { name: "Bad", slug: "Bad Slug" }, bearer(gw.key)),
  );
  assert.is(failure.code, status.INVALID_ARGUMENT, failure.message);
  assert.is(failure.detail?.httpStatus, 400);
  assert.match(failure.details, /slug/);
});

test(
  "a timestamp no RFC 3339 text can carry (year 11476) is INVALID_ARGUMENT naming the field, " +
    "not an internal error",
  async ({ gw, keys }) => {
    const failure = await grpcFailure(
      keys.unary(
        KeysService.method.createKey,
        { name: "far", expiresAt: { seconds: 300_000_000_000n, nanos: 0 } },
        bearer(gw.key),
      ),
    );
    assert.is(failure.code, status.INVALID_ARGUMENT, failure.message);
    assert.is(failure.detail?.httpStatus, 400);
    assert.match(failure.details, /expires_at must be a time from 0001/);
  },
);

test("no authorization metadata is UNAUTHENTICATED with http_status 401", async ({ keys, workspaces }) => {
  const own = await grpcFailure(keys.unary(KeysService.method.getCurrentKey, {}));
  assert.is(own.code, status.UNAUTHENTICATED, own.message);
  assert.is(own.detail?.httpStatus, 401);

  const create = await grpcFailure(
    workspaces.unary(WorkspacesService.method.createWorkspace, { name: "x", slug: "x" }),
  );
  assert.is(create.code, status.UNAUTHENTICATED, create.message);
  assert.is(create.detail?.httpStatus, 401);

  const unknown = await grpcFailure(keys.unary(KeysService.method.getCurrentKey, {}, bearer("sk-gw-v1-nope")));
  assert.is(unknown.code, status.UNAUTHENTICATED, unknown.message);
  assert.is(unknown.detail?.httpStatus, 401);
});

test("a non-management key on a management method is PERMISSION_DENIED with http_status 403", async ({
  gw,
  keys,
  workspaces,
}) => {
  const created = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "plain over grpc" } });
  assert.is(created.status, 201);
  const plain = at(created.body, "key") as string;

  const own = await keys.unary(KeysService.method.getCurrentKey, {}, bearer(plain));
  assert.is(own.data?.isManagementKey, false, "the plain key itself works");

  const failure = await grpcFailure(
    workspaces.unary(WorkspacesService.method.createWorkspace, { name: "Nope", slug: "nope" }, bearer(plain)),
  );
  assert.is(failure.code, status.PERMISSION_DENIED, failure.message);
  assert.is(failure.detail?.httpStatus, 403);
  assert.match(failure.details, /management keys/);
});

test("a batch that does not exist is NOT_FOUND with http_status 404", async ({ gw, batches }) => {
  const failure = await grpcFailure(batches.unary(BatchesService.method.getBatch, { id: "batch_1" }, bearer(gw.key)));
  assert.is(failure.code, status.NOT_FOUND, failure.message);
  assert.is(failure.detail?.httpStatus, 404);
});

test("interns: outside the programme NOT_FOUND (404, not_found); inside it an unknown intern is NOT_FOUND too", async ({
  interns,
}) => {
  const outside = await seedOrganization("grpc-no-interns");
  const hidden = await grpcFailure(
    interns.unary(InternsService.method.getIntern, { internId: randomUUID() }, bearer(outside.key)),
  );
  assert.is(hidden.code, status.NOT_FOUND, hidden.message);
  assert.is(hidden.detail?.httpStatus, 404);
  assert.is(hidden.detail?.reason, "not_found");
  assert.is(hidden.detail?.retryable, false);

  const inside = await seedOrganization("grpc-interns", ["interns"]);
  const unknown = await grpcFailure(
    interns.unary(InternsService.method.getIntern, { internId: randomUUID() }, bearer(inside.key)),
  );
  assert.is(unknown.code, status.NOT_FOUND, unknown.message);
  assert.is(unknown.detail?.reason, "not_found");
  assert.match(unknown.message, /Intern .* not found/);
});

test("Connect over HTTP/1.1 on the REST port serves the same core", async ({ gw }) => {
  const client = createClient(KeysService, createConnectTransport({ baseUrl: gw.url, httpVersion: "1.1" }));
  const reply = await client.getCurrentKey({}, { headers: bearer(gw.key) });
  const rest = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(reply.data?.label, at(rest.body, "data", "label"));
  assert.is(reply.data?.workspaceId, at(rest.body, "data", "workspace_id"));

  let failure: ConnectError | undefined;
  try {
    await client.getCurrentKey({});
  } catch (err) {
    failure = ConnectError.from(err);
  }
  assert.ok(failure, "a call without a key fails");
  assert.is(failure.code, Code.Unauthenticated);
  assert.is(failure.findDetails(ErrorDetailSchema)[0]?.httpStatus, 401);
});

test.run();
