import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, getOption, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { Health } from "../../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection, type ServerReflectionResponse } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { allServices } from "../../../wire/services.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { createGrpcClient, grpcFailure, type GrpcClient } from "../../support/grpc-client.js";

/**
 * gRPC server reflection: what buf curl and grpcurl read to call the gateway without
 * its protos. Switched off, the service is not there at all; health stays.
 */
const test = suite<{ gw: TestGateway; reflection: GrpcClient }>("gRPC server reflection");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
  ctx.reflection = createGrpcClient(ServerReflection, ctx.gw.grpcUrl);
});
test.after(async (ctx) => {
  ctx.reflection?.close();
  await ctx.gw?.stop();
});

const INFRASTRUCTURE = [
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
];
const execFileAsync = promisify(execFile);
const BUF = path.join(import.meta.dirname, "../../../node_modules/.bin/buf");

type Answer = ServerReflectionResponse["messageResponse"];

function filesOf(answer: Answer): string[] {
  if (answer.case !== "fileDescriptorResponse")
    throw new Error(`expected files, got ${answer.case}: ${JSON.stringify(answer.value)}`);
  return answer.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name);
}

function registryOf(answer: Answer): FileRegistry {
  if (answer.case !== "fileDescriptorResponse") throw new Error(`expected files, got ${answer.case}`);
  const [root, ...imports] = answer.value.fileDescriptorProto.map((bytes) =>
    fromBinary(FileDescriptorProtoSchema, bytes),
  );
  // Fails unless every import of every file is in the answer (which, as with grpc-go, comes in no set order).
  return createFileRegistry(root!, (name) => imports.find((file) => file.name === name));
}

test("list_services: every API service and the infrastructure ones, nothing else", async ({ reflection }) => {
  const [answer] = await reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
    { messageRequest: { case: "listServices", value: "*" } },
  ]);
  assert.is(answer?.messageResponse.case, "listServicesResponse");
  const names =
    answer?.messageResponse.case === "listServicesResponse"
      ? answer.messageResponse.value.service.map((s) => s.name)
      : [];
  assert.ok(names.includes("gateway.v1.KeysService"));
  assert.ok(names.includes("grpc.health.v1.Health"));
  assert.equal([...names].sort(), [...allServices.map((s) => s.typeName), ...INFRASTRUCTURE].sort());
});

test("file_containing_symbol gateway.v1.KeysService: the file and all its imports, decodable, options kept", async ({
  reflection,
}) => {
  const [answer] = await reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
    { host: "gw.test", messageRequest: { case: "fileContainingSymbol", value: "gateway.v1.KeysService" } },
  ]);
  assert.is(answer?.validHost, "gw.test");
  assert.is(answer?.originalRequest?.messageRequest.value, "gateway.v1.KeysService");
  const names = filesOf(answer!.messageResponse);
  assert.is(names[0], "gateway/v1/keys.proto", "the requested file comes first");
  for (const imported of [
    "gateway/v1/options.proto",
    "google/api/annotations.proto",
    "google/api/http.proto",
    "google/protobuf/descriptor.proto",
    "google/protobuf/timestamp.proto",
  ]) {
    assert.ok(names.includes(imported), `${imported} is in ${names.join(", ")}`);
  }
  const registry = registryOf(answer!.messageResponse);
  const keys = registry.getService("gateway.v1.KeysService");
  const getCurrentKey = keys?.methods.find((m) => m.name === "GetCurrentKey");
  assert.ok(getCurrentKey, "the decoded service has GetCurrentKey");
  // The REST binding travels too: what a generic client needs to know of the API.
  const rule = getOption(getCurrentKey!, http);
  assert.equal(rule.pattern, { case: "get", value: "/api/v1/key" });
});

test("one stream: later answers leave out the imports already sent, never the requested file", async ({
  reflection,
}) => {
  const answers = await reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
    { messageRequest: { case: "fileContainingSymbol", value: "gateway.v1.KeysService.GetCurrentKey" } },
    { messageRequest: { case: "fileByFilename", value: "gateway/v1/workspaces.proto" } },
    { messageRequest: { case: "fileContainingSymbol", value: "gateway.v1.CurrentKey" } },
  ]);
  const [keys, workspaces, again] = answers.map((a) => filesOf(a.messageResponse));
  assert.is(keys![0], "gateway/v1/keys.proto");
  assert.is(workspaces![0], "gateway/v1/workspaces.proto");
  assert.not.ok(workspaces!.includes("google/protobuf/descriptor.proto"), "sent with keys.proto already");
  assert.equal(again, ["gateway/v1/keys.proto"]);
});

test("unknown names answer error_response NOT_FOUND and the stream goes on", async ({ reflection }) => {
  const answers = await reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
    { messageRequest: { case: "fileContainingSymbol", value: "gateway.v1.NoSuchThing" } },
    { messageRequest: { case: "fileByFilename", value: "gateway/v1/nothing.proto" } },
    { messageRequest: { case: "allExtensionNumbersOfType", value: "gateway.v1.NoSuchThing" } },
    {},
    { messageRequest: { case: "listServices", value: "" } },
  ]);
  assert.is(answers.length, 5);
  for (const answer of answers.slice(0, 3)) {
    assert.is(answer.messageResponse.case, "errorResponse");
    assert.is(
      answer.messageResponse.case === "errorResponse" && answer.messageResponse.value.errorCode,
      status.NOT_FOUND,
    );
  }
  assert.is(
    answers[3]!.messageResponse.case === "errorResponse" && answers[3]!.messageResponse.value.errorCode,
    status.INVALID_ARGUMENT,
  );
  assert.is(answers[4]!.messageResponse.case, "listServicesResponse");
});

test("extensions: the numbers of google.protobuf.MethodOptions and the file of google.api.http", async ({
  reflection,
}) => {
  const [numbers, byExtension] = await reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
    { messageRequest: { case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" } },
    {
      messageRequest: {
        case: "fileContainingExtension",
        value: { containingType: "google.protobuf.MethodOptions", extensionNumber: http.number },
      },
    },
  ]);
  assert.ok(
    numbers!.messageResponse.case === "allExtensionNumbersResponse" &&
      numbers!.messageResponse.value.extensionNumber.includes(http.number),
  );
  assert.is(filesOf(byExtension!.messageResponse)[0], "google/api/annotations.proto");
});

test("v1alpha, which older grpcurl asks for, answers the same", async ({ gw }) => {
  const alpha = createGrpcClient(ServerReflectionV1alpha, gw.grpcUrl);
  try {
    const [answer] = await alpha.bidiStream(ServerReflectionV1alpha.method.serverReflectionInfo, [
      { messageRequest: { case: "fileContainingSymbol", value: "gateway.v1.KeysService" } },
    ]);
    assert.is(
      answer?.messageResponse.case === "fileDescriptorResponse" &&
        fromBinary(FileDescriptorProtoSchema, answer.messageResponse.value.fileDescriptorProto[0]!).name,
      "gateway/v1/keys.proto",
    );
  } finally {
    alpha.close();
  }
});

test("buf curl calls GetCurrentKey through reflection alone (no --schema), over v1 and v1alpha", async ({ gw }) => {
  for (const protocol of ["grpc-v1", "grpc-v1alpha"]) {
    const { stdout } = await execFileAsync(
      BUF,
      [
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect",
        "--reflect-protocol",
        protocol,
        "-H",
        `Authorization: Bearer ${gw.key}`,
        `${gw.grpcUrl}/gateway.v1.KeysService/GetCurrentKey`,
      ],
      { cwd: "/" },
    );
    const reply = JSON.parse(stdout) as { data?: { label?: string; isManagementKey?: boolean } };
    assert.match(reply.data?.label ?? "", /^sk-gw-v1-/, protocol);
    assert.is(reply.data?.isManagementKey, true, protocol);
  }
  const { stdout } = await execFileAsync(
    BUF,
    ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--list-methods", gw.grpcUrl],
    { cwd: "/" },
  );
  assert.ok(stdout.split("\n").includes("gateway.v1.InferenceService/CreateChatCompletion"), stdout);
});

test("GATEWAY_GRPC_REFLECTION=false: reflection is UNIMPLEMENTED, health still answers", async () => {
  const gw = await startTestGateway({ GATEWAY_GRPC_REFLECTION: "false" });
  const reflection = createGrpcClient(ServerReflection, gw.grpcUrl);
  const health = createGrpcClient(Health, gw.grpcUrl);
  try {
    const failure = await grpcFailure(
      reflection.bidiStream(ServerReflection.method.serverReflectionInfo, [
        { messageRequest: { case: "listServices", value: "" } },
      ]),
    );
    assert.is(failure.code, status.UNIMPLEMENTED);
    const { statuses } = await health.unary(Health.method.list, {});
    assert.ok("gateway.v1.KeysService" in statuses);
    assert.not.ok("grpc.reflection.v1.ServerReflection" in statuses, "health does not report what is not served");
  } finally {
    reflection.close();
    health.close();
    await gw.stop();
  }
});

test.run();
