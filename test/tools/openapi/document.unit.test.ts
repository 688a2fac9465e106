import { fileURLToPath } from "node:url";
import { validate, compileErrors } from "@readme/openapi-parser";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { Access, access } from "../../../gen/gateway/v1/options_pb.js";
import { RouteTable } from "../../../facade/route-table.js";
import type { JsonSchema, Operation, Parameter } from "../../../tools/openapi/openapi-types.js";
import { optionOf } from "../../../wire/proto-options.js";
import { allServices } from "../../../wire/services.js";
import { bodyValidator, OPENAPI_FILE, openApiDocument } from "../../support/openapi.js";

/**
 * The committed OpenAPI document (gen/openapi/openapi.json): a valid OpenAPI 3.1 document by
 * @readme/openapi-parser, one operation per route of the facade and no other, and the facade's
 * JSON rules in its schemas. No gateway: real answers are checked in real-answers.test.ts.
 */
const test = suite("openapi: document");
const document = openApiDocument();
const routes = RouteTable.fromServices(allServices).routes;
const schemas = document.components.schemas;

function operations(): Array<{ verb: string; path: string; op: Operation }> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([verb, op]) => ({ verb, path, op })),
  );
}

/** An operation's path and query parameters; its header parameters refer to components (headers.unit.test.ts). */
function ownParameters(op: Operation): Parameter[] {
  return (op.parameters ?? []).filter((p): p is Parameter => !("$ref" in p));
}

function property(type: string, name: string): JsonSchema {
  const found = schemas[type]?.properties?.[name];
  if (!found) throw new Error(`${type} has no property ${name}`);
  return found;
}

test("is a valid OpenAPI 3.1 document", async () => {
  assert.is(document.openapi, "3.1.0");
  const result = await validate(fileURLToPath(OPENAPI_FILE));
  assert.ok(result.valid, result.valid ? "" : compileErrors(result));
});

test("has one operation per route of the facade's table, and no other", () => {
  const documented = operations()
    .map(({ verb, path }) => `${verb.toUpperCase()} ${path}`)
    .sort();
  const served = routes.map((route) => `${route.verb} ${route.template.replace(/\{([^}=]+)(=\*)?\}/g, "{$1}")}`).sort();
  assert.equal(documented, served);
  assert.ok(served.length >= 90, `${served.length} routes`);
  // Services without REST bindings (operator, edge, gRPC health) have none.
  assert.not.ok(documented.some((line) => line.includes("Operator") || line.includes("grpc")));
});

test("operation ids are <Service>_<Method> (_2… for additional bindings), unique, tagged with their service", () => {
  const ids = operations().map(({ op }) => op.operationId);
  assert.is(new Set(ids).size, ids.length);
  const bindings = new Map<string, number>();
  for (const route of routes) {
    const id = `${route.method.parent.name}_${route.method.name}`;
    const count = (bindings.get(id) ?? 0) + 1;
    bindings.set(id, count);
    const op = bodyValidator(document).operation(route.verb, route.template.replace(/=\*\}/g, "}"));
    assert.is(op.operationId, count === 1 ? id : `${id}_${count}`);
    assert.equal(op.tags, [route.method.parent.name]);
  }
  assert.ok(
    document.tags.some((tag) => tag.name === "BatchesService" && tag.description?.startsWith("Submit, read, list")),
  );
});

test("bearer authentication everywhere but on public methods, which have `security: []`", () => {
  assert.equal(document.components.securitySchemes.bearerAuth, {
    type: "http",
    scheme: "bearer",
    description: "An API key of the gateway.",
  });
  assert.equal(document.security, [{ bearerAuth: [] }]);
  const validator = bodyValidator(document);
  let publics = 0;
  for (const route of routes) {
    const op = validator.operation(route.verb, route.template);
    if (optionOf(route.method, access) === Access.PUBLIC) {
      publics += 1;
      assert.equal(op.security, [], route.template);
    } else {
      assert.is(op.security, undefined, route.template);
    }
  }
  assert.ok(publics > 0);
  assert.equal(validator.operation("POST", "/api/v1/auth/keys").security, []);
});

test("every operation answers errors with the shared error envelope", () => {
  for (const { op } of operations()) {
    assert.equal(op.responses["4XX"], { $ref: "#/components/responses/Error" });
    assert.equal(op.responses["5XX"], { $ref: "#/components/responses/Error" });
  }
  assert.equal(document.components.responses.Error?.content?.["application/json"]?.schema, {
    $ref: "#/components/schemas/Error",
  });
  const validator = bodyValidator(document);
  assert.equal(validator.response("GET", "/api/v1/key", 404, { error: { code: 404, message: "gone" } }), []);
  assert.equal(
    validator.response("GET", "/api/v1/key", 503, {
      error: { code: 503, message: "x", metadata: { reason: "unreachable", retryable: true } },
    }),
    [],
  );
  assert.ok(validator.response("GET", "/api/v1/key", 404, { error: { code: "404" } }).length > 0);
});

test("success statuses, paths and parameters follow the proto options", () => {
  const validator = bodyValidator(document);
  assert.ok(validator.operation("POST", "/api/v1/keys").responses["201"]);
  assert.ok(validator.operation("POST", "/api/v1/batches").responses["202"]);
  assert.is(
    (validator.operation("DELETE", "/api/v1/vault/secrets/{name}").responses["204"] as { description: string })
      .description,
    "No Content",
  );
  const getKey = validator.operation("GET", "/api/v1/keys/{hash}");
  assert.equal(ownParameters(getKey), [
    {
      name: "hash",
      in: "path",
      required: true,
      description: "64 lowercase hex characters.",
      schema: { type: "string", minLength: 1, pattern: "^[0-9a-f]{64}$" },
    },
  ]);
  // GET: every field not in the path is a query parameter, with its rules.
  const listKeys = ownParameters(validator.operation("GET", "/api/v1/keys"));
  assert.equal(
    listKeys.map((p) => [p.name, p.in]),
    [
      ["offset", "query"],
      ["limit", "query"],
      ["include_disabled", "query"],
    ],
  );
  assert.equal(listKeys[1]?.schema, { type: "integer", format: "int32", minimum: 1, maximum: 100 });
  // A body of `*` leaves no query parameters; the path's field is not in the body.
  const budget = validator.operation("PUT", "/api/v1/workspaces/{workspace_ref}/budgets/{interval}");
  assert.equal(
    ownParameters(budget).map((p) => p.in),
    ["path", "path"],
  );
  assert.equal(ownParameters(budget)[1]?.schema.enum, ["daily", "weekly", "monthly", "lifetime"]);
  const body = budget.requestBody?.content["application/json"]?.schema;
  assert.ok(body?.properties && !("workspace_ref" in body.properties) && !("interval" in body.properties));
});

test("server streams are SSE, with a JSON body where the envelope has a json_reply member", () => {
  const validator = bodyValidator(document);
  const chat = validator.operation("POST", "/api/v1/chat/completions").responses["200"];
  assert.ok(chat && "content" in chat && chat.content);
  assert.equal(Object.keys(chat.content), ["application/json", "text/event-stream"]);
  assert.is(chat.content["application/json"]?.schema.$ref, "#/components/schemas/gateway.v1.ChatCompletion");
  assert.equal(
    chat.content["text/event-stream"]?.schema.anyOf?.map((s) => s.$ref),
    ["#/components/schemas/gateway.v1.ChatCompletionChunk", "#/components/schemas/Error"],
  );
  assert.match(chat.description, /data: \[DONE\]/);
  const messages = validator.operation("POST", "/api/v1/messages").responses["200"];
  assert.ok(messages && "description" in messages);
  assert.match(messages.description, /event: <type>/);
});

test("uploads are multipart or the raw body; HttpBody answers are raw bytes", () => {
  const validator = bodyValidator(document);
  const upload = validator.operation("POST", "/api/v1/files");
  assert.equal(upload.requestBody?.content["multipart/form-data"]?.schema, {
    type: "object",
    properties: { file: { type: "string", format: "binary" } },
    required: ["file"],
  });
  // The metadata comes from the query; the name and content type from the part.
  assert.equal(
    ownParameters(upload).map((p) => p.name),
    ["workspace_id", "provider"],
  );
  assert.equal(validator.operation("POST", "/api/v1/batches").requestBody?.content["application/json"]?.schema, {
    $ref: "#/components/schemas/gateway.v1.CreateBatchRequest",
  });
  const content = validator.operation("GET", "/api/v1/files/{file_id}/content").responses["200"];
  assert.ok(content && "content" in content);
  assert.equal(content.content, { "*/*": { schema: { type: "string", format: "binary" } } });
});

test("schemas: proto names, integers, nullable, omit_empty, enums, free-form JSON, timestamps", () => {
  // 64-bit integers are JSON numbers.
  assert.equal(property("gateway.v1.File", "size_bytes"), { type: "integer", format: "int64" });
  // Nullable fields are always present, as the value or null.
  assert.equal(property("gateway.v1.CurrentKey", "limit").type, ["number", "null"]);
  assert.equal(property("gateway.v1.CurrentKey", "limit_reset"), {
    type: ["string", "null"],
    enum: ["daily", "weekly", "monthly", null],
  });
  assert.equal(property("gateway.v1.CurrentKey", "effective_budget").anyOf, [
    { $ref: "#/components/schemas/gateway.v1.Budget" },
    { type: "null" },
  ]);
  assert.ok(schemas["gateway.v1.CurrentKey"]?.required?.includes("limit"));
  assert.equal(property("gateway.v1.CurrentKey", "expires_at").format, "date-time");
  // omit_empty lists may be absent; others are always there.
  const message = schemas["gateway.v1.ChatCompletionMessage"];
  assert.ok(message?.properties?.tool_calls && !message.required?.includes("tool_calls"));
  assert.ok(schemas["gateway.v1.CurrentKey"]?.required?.includes("budgets"));
  // Struct is any object, Value any JSON.
  assert.equal(property("gateway.v1.BatchRequestItem", "body").type, "object");
  // Request rules: required, lengths, ranges, uuid.
  const createKey = schemas["gateway.v1.CreateKeyRequest"];
  assert.equal(createKey?.required, ["name"]);
  assert.equal(property("gateway.v1.CreateKeyRequest", "name"), {
    type: "string",
    minLength: 1,
    maxLength: 100,
    description: "1 to 100 characters.",
  });
  assert.equal(property("gateway.v1.CreateKeyRequest", "limit").minimum, 0);
  assert.equal(property("gateway.v1.CreateKeyRequest", "workspace_id").format, "uuid");
  // A message used both ways has a schema per direction.
  assert.ok(
    schemas["gateway.v1.ChatToolCall-Input"] &&
      schemas["gateway.v1.ChatToolCall-Output"] &&
      !schemas["gateway.v1.ChatToolCall"],
  );
});

test("PATCH bodies leave out the update mask and take null to clear", () => {
  const patch = bodyValidator(document).operation("PATCH", "/api/v1/keys/{hash}").requestBody?.content[
    "application/json"
  ]?.schema;
  assert.ok(patch?.properties && !("update_mask" in patch.properties) && !("hash" in patch.properties));
  assert.equal(patch.properties.limit?.type, ["number", "null"]);
  assert.equal(bodyValidator(document).request("PATCH", "/api/v1/keys/{hash}", { limit: null, name: "renamed" }), []);
  assert.ok(bodyValidator(document).request("PATCH", "/api/v1/keys/{hash}", { name: "" }).length > 0);
});

test.run();
