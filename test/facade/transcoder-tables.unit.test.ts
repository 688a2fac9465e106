import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { parseTemplate, splitPath } from "../../facade/path-template.js";
import { decodeRequest } from "../../facade/request-decoder.js";
import { RouteTable } from "../../facade/route-table.js";
import { httpErrorOf } from "../../wire/errors.js";
import { allServices } from "../../wire/services.js";

/**
 * The transcoder's parts as tables, without a gateway: path templates, path splitting,
 * route matching and reply modes compiled from the real protos, and request decoding (body, path
 * variables, query, update masks, type errors). Runs in milliseconds; the gateway-level suites
 * (routes, transcoding) show the same behaviour end to end.
 */
const test = suite("facade: transcoder tables");
const table = RouteTable.fromServices(allServices);

test("path templates: the supported subset parses, anything else fails the start", () => {
  const cases: Array<[string, unknown]> = [
    [
      "/api/v1/keys",
      [
        { kind: "literal", value: "api" },
        { kind: "literal", value: "v1" },
        { kind: "literal", value: "keys" },
      ],
    ],
    [
      "/a/{hash}",
      [
        { kind: "literal", value: "a" },
        { kind: "variable", field: ["hash"] },
      ],
    ],
    [
      "/a/{user.id=*}",
      [
        { kind: "literal", value: "a" },
        { kind: "variable", field: ["user", "id"] },
      ],
    ],
  ];
  for (const [template, segments] of cases) assert.equal(parseTemplate(template), segments, template);
  for (const bad of ["a/b", "/a/{x=**}", "/a/{X}", "/a/*", "/a/b:verb"])
    assert.throws(() => parseTemplate(bad), undefined, bad);
});

test("path splitting: split before decoding, malformed escapes kept and flagged", () => {
  const cases: Array<[string, string[], boolean]> = [
    ["/api/v1/end-users/a%2Fb", ["api", "v1", "end-users", "a/b"], false],
    ["/api/v1/end-users/%C3%BC", ["api", "v1", "end-users", "ü"], false],
    ["/api/v1/end-users/%zz", ["api", "v1", "end-users", "%zz"], true],
    ["/api/v1/keys/", ["api", "v1", "keys", ""], false],
  ];
  for (const [path, segments, malformed] of cases) assert.equal(splitPath(path), { segments, malformed }, path);
});

test("route matching: method, values, literals before variables, 405 and 404", () => {
  const cases: Array<[string, string, string | string[] | null, string[]?]> = [
    ["GET", "/api/v1/keys", "ListKeys", []],
    ["PATCH", "/api/v1/keys/abc", "UpdateKey", ["abc"]],
    ["GET", "/api/v1/videos/models", "ListVideoModels", []],
    ["GET", "/api/v1/videos/job-1", "GetVideo", ["job-1"]],
    ["GET", "/api/v1/videos/models/content", "GetVideoContent", ["models"]],
    ["GET", "/api/v1/models/openai/gpt-4o/endpoints", "ListModelEndpoints", ["openai", "gpt-4o"]],
    ["PUT", "/api/v1/keys", ["GET", "POST"]],
    ["GET", "/api/v1/keys/", null],
    ["GET", "/api/v1/nothing", null],
  ];
  for (const [verb, path, expected, values] of cases) {
    const match = table.match(verb, splitPath(path).segments);
    if (expected === null) assert.is(match.kind, "none", path);
    else if (Array.isArray(expected))
      assert.equal(match.kind === "wrong-verb" ? match.allowed : match.kind, expected, path);
    else if (match.kind !== "route") assert.unreachable(`${verb} ${path}: ${match.kind}`);
    else assert.equal([match.route.method.name, match.values], [expected, values], path);
  }
});

test("reply modes are fixed per route at start-up", () => {
  const modeOf = (verb: string, path: string) => {
    const match = table.match(verb, splitPath(path).segments);
    return match.kind === "route" ? match.route.reply : match.kind;
  };
  const cases: Array<[string, string, string]> = [
    ["GET", "/api/v1/keys", "json"],
    ["POST", "/api/v1/interns/i/chat/completions", "stream"],
    // The JSON-native inference routes: raw bytes each way.
    ["POST", "/api/v1/chat/completions", "http-body-stream"],
    ["POST", "/api/v1/embeddings", "http-body"],
    ["GET", "/api/v1/videos/j/content", "http-body"],
    ["GET", "/api/v1/files/f/content", "http-body-stream"],
    ["POST", "/api/v1/files", "json"],
  ];
  for (const [verb, path, mode] of cases) assert.is(modeOf(verb, path), mode, `${verb} ${path}`);
  assert.ok(
    table.routes.every(
      (route) => route.variableFields.length === route.segments.filter((s) => s.kind === "variable").length,
    ),
  );
});

/** The request message a REST request decodes to, as proto JSON, or the 400's message. */
function decoded(verb: string, path: string, body: unknown, query = ""): JsonValue | string {
  const match = table.match(verb, splitPath(path).segments);
  if (match.kind !== "route") throw new Error(`${verb} ${path}: no route`);
  try {
    return toJson(
      match.route.method.input,
      decodeRequest(match.route, { body, values: match.values, query: new URLSearchParams(query) }) as never,
    );
  } catch (err) {
    if (err instanceof ConnectError) return `${httpErrorOf(err).status} ${err.rawMessage}`;
    throw err;
  }
}

test("request decoding: body, path, query, update masks and type errors", () => {
  const hash = "a".repeat(64);
  const cases: Array<[string, string, unknown, string, JsonValue | string]> = [
    ["PATCH", `/api/v1/keys/${hash}`, { name: "n" }, "", { hash, name: "n", updateMask: "name" }],
    [
      "PATCH",
      `/api/v1/keys/${hash}`,
      { name: "n", disabled: true },
      "",
      { hash, name: "n", disabled: true, updateMask: "name,disabled" },
    ],
    // The path wins over the body, and an addressing field is never part of the mask.
    ["PATCH", `/api/v1/keys/${hash}`, { hash: "b".repeat(64), name: "n" }, "", { hash, name: "n", updateMask: "name" }],
    // camelCase keys are accepted; unknown keys are ignored.
    [
      "PATCH",
      `/api/v1/keys/${hash}`,
      { includeByokInLimit: true, nonsense: 1 },
      "",
      { hash, includeByokInLimit: true, updateMask: "includeByokInLimit" },
    ],
    [
      "GET",
      "/api/v1/keys",
      undefined,
      "offset=5&include_disabled=true&unknown=1",
      { offset: 5, includeDisabled: true },
    ],
    ["GET", "/api/v1/keys", undefined, "limit=2&limit=3", { limit: 3 }],
    ["GET", "/api/v1/keys", undefined, "offset=abc", "400 query parameter 'offset' must be an integer"],
    [
      "GET",
      "/api/v1/keys",
      undefined,
      "include_disabled=maybe",
      "400 query parameter 'include_disabled' must be true or false",
    ],
    ["GET", "/api/v1/end-users/team%2F1", undefined, "", { user: "team/1" }],
    ["POST", "/api/v1/workspaces", [], "", "400 The request body must be a JSON object"],
    ["PATCH", `/api/v1/keys/${hash}`, { disabled: "yes" }, "", "400 disabled must be a boolean"],
  ];
  for (const [verb, path, body, query, expected] of cases)
    assert.equal(decoded(verb, path, body, query), expected, `${verb} ${path} ${JSON.stringify(body)} ${query}`);
});

test.run();
