import * as assert from "uvu/assert";
import {
  create,
  createFileRegistry,
  ScalarType,
  setExtension,
  type DescMessage,
  type JsonObject,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import {
  file_gateway_v1_options,
  FieldRulesSchema,
  rules as rulesOption,
  type FieldRules,
} from "../../../gen/gateway/v1/options_pb.js";
import { compileJsonValidator } from "../../../server/platform/rpc/json-validator.js";
import { findField } from "../../../wire/json-input.js";
import { suite } from "../../support/suite.js";
import { ACCEPTED, camel, Chat, compiled, expected, meaning, user, VALID } from "./json-validator-fixture.js";

/**
 * The compiled JSON validator accepts what the two-step path accepts and leaves the body
 * normalized in place to what it means (json-validator-fixture.ts has the reference and the valid
 * bodies); zero values of implicit-presence scalars; the types it refuses to compile.
 */
const test = suite("compiled JSON validator: valid bodies");

/** Where a body has unknown fields (known fields named by proto name): each one's path and its value as JSON text. */
function unknownFields(
  schema: DescMessage,
  object: JsonObject,
  name: string,
  into: Map<string, string>,
): Map<string, string> {
  for (const [key, value] of Object.entries(object)) {
    const field = findField(schema, key);
    const path = `${name}/${field?.name ?? key}`;
    if (!field) into.set(path, JSON.stringify(value));
    else if (field.fieldKind === "message" && !field.message.typeName.startsWith("google.") && value !== null)
      unknownFields(field.message, value as JsonObject, path, into);
    else if (
      field.fieldKind === "list" &&
      field.message &&
      !field.message.typeName.startsWith("google.") &&
      Array.isArray(value)
    ) {
      value.forEach((item, i) => unknownFields(field.message!, item as JsonObject, `${path}/${i}`, into));
    }
  }
  return into;
}

test("valid bodies are accepted, normalized to what they mean, unknown fields untouched", () => {
  for (const [label, schema, body] of VALID) {
    assert.is(expected(schema, body), ACCEPTED, `${label}: the reference refuses it`);
    const { outcome, normalized } = compiled(schema, body);
    assert.is(outcome, ACCEPTED, label);
    assert.equal(meaning(schema, normalized), meaning(schema, body), `${label}: meaning`);
    assertNormal(schema, normalized, label);
    assert.equal(
      unknownFields(schema, normalized, "", new Map()),
      unknownFields(schema, body, "", new Map()),
      `${label}: unknown fields`,
    );
  }
});

const TEXT_SCALARS = [ScalarType.STRING, ScalarType.BYTES, ScalarType.BOOL];

/** Known fields by proto name only, no nulls, integers as numbers, enums as wire strings. */
function assertNormal(schema: DescMessage, object: JsonObject, label: string): void {
  for (const [key, value] of Object.entries(object)) {
    const field = findField(schema, key);
    if (!field) continue;
    assert.is(key, field.name, `${label}: ${key} keeps its JSON name`);
    assert.is.not(value, null, `${label}: ${key} is null`);
    const message = field.fieldKind === "message" || field.fieldKind === "list" ? field.message : undefined;
    if (field.fieldKind === "scalar" && !TEXT_SCALARS.includes(field.scalar))
      assert.is.not(typeof value, "string", `${label}: ${key} is a digit string`);
    if (field.fieldKind === "enum") assert.type(value, "string", `${label}: ${key}`);
    if (message && !message.typeName.startsWith("google.")) {
      for (const item of field.fieldKind === "list" ? (value as JsonObject[]) : [value as JsonObject])
        assertNormal(message, item, label);
    }
  }
}

test("the body is normalized in place: renamed, nulls gone, digit strings numbers, enums strings", () => {
  const body: JsonObject = {
    model: "m",
    messages: [{ role: "tool", toolCallId: "c", content: null }],
    maxTokens: "7",
    seed: "-3",
    temperature: null,
    provider: { sort: "price" },
    topP: 0.5,
  };
  compileJsonValidator(Chat)(body);
  assert.equal(body, {
    model: "m",
    messages: [{ role: "tool", tool_call_id: "c" }],
    max_tokens: 7,
    seed: -3,
    provider: { sort: "price" },
    top_p: 0.5,
  });
  assert.equal(
    Object.keys(body),
    ["model", "messages", "max_tokens", "seed", "provider", "top_p"],
    "renamed fields keep their place",
  );
  const both: JsonObject = { maxTokens: 1, model: "m", messages: [user()], max_tokens: 2 };
  compileJsonValidator(Chat)(both);
  assert.equal(Object.keys(both), ["max_tokens", "model", "messages"]);
  assert.is(both.max_tokens, 2, "the later of two names wins, as decodeWireJson reads them");
});

/**
 * A message of one-off fields with `(gateway.v1.rules)`, for what the request messages have no
 * example of: implicit-presence scalars whose zero value would break a rule, bytes, float.
 */
function synthetic(
  fields: Array<{ name: string; type: FieldDescriptorProto_Type; rules?: Omit<Partial<FieldRules>, "$typeName"> }>,
): DescMessage {
  const file = create(FileDescriptorProtoSchema, {
    name: "synthetic.proto",
    package: "t",
    syntax: "proto3",
    dependency: ["gateway/v1/options.proto"],
    messageType: [
      {
        name: "M",
        field: fields.map(({ name, type, rules: fieldRules }, i) => {
          const options = create(FieldOptionsSchema);
          if (fieldRules) setExtension(options, rulesOption, create(FieldRulesSchema, fieldRules));
          return {
            name,
            jsonName: camel(name),
            number: i + 1,
            type,
            label: FieldDescriptorProto_Label.OPTIONAL,
            options,
          };
        }),
      },
    ],
  });
  return createFileRegistry(file, (name) =>
    name === "gateway/v1/options.proto" ? file_gateway_v1_options : undefined,
  ).getMessage("t.M")!;
}

test("implicit-presence scalars: the zero value is not set, so only `required` applies to it", () => {
  const { INT32, DOUBLE, STRING, BOOL, BYTES } = FieldDescriptorProto_Type;
  const schema = synthetic([
    { name: "count", type: INT32, rules: { gte: 1 } },
    { name: "ratio", type: DOUBLE, rules: { gte: 1 } },
    { name: "code", type: STRING, rules: { pattern: "^a+$", maxLen: 3 } },
    { name: "flag", type: BOOL, rules: { required: true } },
    { name: "blob", type: BYTES, rules: { required: true } },
  ]);
  const bodies: JsonObject[] = [
    { count: 0, flag: true, blob: "AA==" },
    { count: "0", flag: true, blob: "AA==" },
    { count: -0, flag: true, blob: "AA==" },
    { count: "-0", flag: true, blob: "AA==" },
    { ratio: 0, flag: true, blob: "AA==" },
    { ratio: -0, flag: true, blob: "AA==" },
    { code: "", flag: true, blob: "AA==" },
    { code: "b", flag: true, blob: "AA==" },
    { code: "aaaa", flag: true, blob: "AA==" },
    { flag: false, blob: "AA==" },
    { flag: true, blob: "" },
    { flag: true, blob: "====" },
    { flag: true, blob: " \n" },
    { flag: true, blob: "A" },
    { flag: true, blob: "a-_b" },
    // A zero value before a broken rule: the first broken rule is the later field's.
    { count: 0, code: "b", flag: true, blob: "AA==" },
    { ratio: 0, code: "b", flag: true, blob: "AA==" },
    { code: "", flag: false, blob: "AA==" },
  ];
  const outcomes = bodies.map((body) => [JSON.stringify(body), expected(schema, body)]);
  assert.equal(
    bodies.map((body) => [JSON.stringify(body), compiled(schema, body).outcome]),
    outcomes,
  );
  assert.ok(
    outcomes.filter(([, outcome]) => outcome === ACCEPTED).length >= 5,
    "zero values pass rules they would break if set",
  );
});

test("types the request messages do not use are refused when compiling", () => {
  assert.throws(
    () => compileJsonValidator(synthetic([{ name: "f", type: FieldDescriptorProto_Type.FLOAT }])),
    /field t\.M\.f is a float/,
  );
  assert.is(compileJsonValidator(Chat), compileJsonValidator(Chat), "compiled once per schema");
});

test.run();
