import { status } from "@grpc/grpc-js";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "../../../gen/grpc/health/v1/health_pb.js";
import { allServices } from "../../../wire/services.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { bearer, createGrpcClient, grpcFailure, type GrpcClient } from "../../support/grpc-client.js";

/**
 * grpc.health.v1.Health on the gRPC port: public, the readiness of GET /readyz, NOT_FOUND
 * for a service it does not know, and a Watch that reports the drain and ends so it cannot hold
 * the drain up.
 */
const test = suite<{ gw: TestGateway; health: GrpcClient }>("gRPC health (grpc.health.v1)");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.health = createGrpcClient(Health, ctx.gw.grpcUrl);
});
test.after(async (ctx) => {
  ctx.health?.close();
  await ctx.gw?.stop();
});

test("Check without a key: the server as a whole and each API service are SERVING", async ({ health }) => {
  assert.is((await health.unary(Health.method.check, { service: "" })).status, ServingStatus.SERVING);
  assert.is(
    (await health.unary(Health.method.check, { service: "gateway.v1.KeysService" })).status,
    ServingStatus.SERVING,
  );
  assert.is(
    (await health.unary(Health.method.check, { service: "grpc.health.v1.Health" })).status,
    ServingStatus.SERVING,
  );
});

test("Check ignores credentials: an unknown key is not refused, the gateway's auth never sees the call", async ({
  health,
}) => {
  const reply = await health.unary(Health.method.check, { service: "" }, bearer("sk-gw-v1-not-a-key"));
  assert.is(reply.status, ServingStatus.SERVING);
});

test("Check of an unknown service is NOT_FOUND, as the health protocol says", async ({ health }) => {
  const failure = await grpcFailure(health.unary(Health.method.check, { service: "gateway.v1.NoSuchService" }));
  assert.is(failure.code, status.NOT_FOUND);
  assert.match(failure.details, /gateway\.v1\.NoSuchService/);
});

test("List names the server and every served service, each SERVING", async ({ health }) => {
  const { statuses } = await health.unary(Health.method.list, {});
  for (const name of [
    "",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    ...allServices.map((s) => s.typeName),
  ]) {
    assert.is(statuses[name]?.status, ServingStatus.SERVING, name);
  }
});

test("Connect on the HTTP port reaches the same health service", async ({ gw }) => {
  const client = createClient(Health, createConnectTransport({ baseUrl: gw.url, httpVersion: "1.1" }));
  assert.is((await client.check({ service: "" })).status, ServingStatus.SERVING);
});

test("Watch of an unknown service answers SERVICE_UNKNOWN and keeps the stream open", async ({ health }) => {
  const watch = health.serverStream(Health.method.watch, { service: "gateway.v1.NoSuchService" });
  const first = await watch.messages[Symbol.asyncIterator]().next();
  assert.is(first.done, false);
  assert.is(first.value?.status, ServingStatus.SERVICE_UNKNOWN);
  watch.cancel();
});

test.run();

// A gateway of its own: the drain it starts would answer NOT_SERVING to every test after it.
const draining = suite<{ gw: TestGateway; health: GrpcClient }>("gRPC health (grpc.health.v1): the drain");
draining.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.health = createGrpcClient(Health, ctx.gw.grpcUrl);
});
draining.after(async (ctx) => {
  ctx.health?.close();
  await ctx.gw?.stop();
});

draining(
  "from the drain on: Watch reports NOT_SERVING and ends (OK), Check answers NOT_SERVING",
  async ({ gw, health }) => {
    const watch = health.serverStream(Health.method.watch, { service: "" });
    const seen: ServingStatus[] = [];
    for await (const { status: serving } of watch.messages) {
      seen.push(serving);
      // SIGTERM's first step (app.ts stop()); the listeners stay open.
      if (serving === ServingStatus.SERVING) gw.gateway.readiness.startDraining();
    }
    assert.equal(seen, [ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    assert.is((await health.unary(Health.method.check, { service: "" })).status, ServingStatus.NOT_SERVING);
    assert.is(
      (await health.unary(Health.method.check, { service: "gateway.v1.KeysService" })).status,
      ServingStatus.NOT_SERVING,
    );
  },
);

draining.run();
