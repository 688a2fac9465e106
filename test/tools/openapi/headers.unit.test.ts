import fs from "node:fs";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { DOCUMENTED_HEADERS } from "../../../tools/openapi/headers.js";
import type { Operation } from "../../../tools/openapi/openapi-types.js";
import { bodyValidator, openApiDocument } from "../../support/openapi.js";

/**
 * The committed OpenAPI document describes every header of the REST API beyond HTTP's own
 * (tools/openapi/headers.ts): each `x-gateway-*` header and `Retry-After` the code names, as a
 * header parameter or a response header of the routes it applies to, described once in the
 * components. A header added to the code without a description fails here.
 */
const test = suite("openapi: headers");
const document = openApiDocument();
const validator = bodyValidator(document);
const ROOT = path.resolve(import.meta.dirname, "../../..");

/** The header names the gateway's own code writes as string literals: `x-gateway-*`, `x-ratelimit-*`, `retry-after`. */
function headersNamedInCode(): Set<string> {
  const names = new Set<string>();
  for (const folder of ["server", "facade", "wire"]) {
    for (const file of fs.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts")) continue;
      const source = fs.readFileSync(path.join(ROOT, folder, file), "utf8");
      for (const match of source.matchAll(/["'`]((?:x-gateway-|x-ratelimit-)[a-z0-9-]+|retry-after)["'`]/gi))
        names.add(match[1]!.toLowerCase());
    }
  }
  return names;
}

/** OpenAI's rate-limit headers, sorted. */
const RATE_LIMIT = ["limit", "remaining", "reset"]
  .flatMap((what) => ["requests", "tokens"].map((kind) => `x-ratelimit-${what}-${kind}`))
  .sort();

function requestHeaders(op: Operation): string[] {
  return (op.parameters ?? []).flatMap((p) => ("$ref" in p ? [p.$ref.replace("#/components/parameters/", "")] : []));
}

/** The headers listed for an answer of `verb path` (`status`: the entry, or 400/500 for the shared 4XX/5XX one). */
const responseHeaders = (verb: string, path: string, status: number): string[] =>
  validator.responseHeaders(verb, path, status);

test("every x-gateway-* header and Retry-After the code names is described, and nothing else", () => {
  const named = headersNamedInCode();
  assert.ok(named.has("x-gateway-cache-ttl") && named.has("retry-after"), [...named].join(", "));
  const described = new Set([
    ...Object.keys(document.components.parameters),
    ...Object.keys(document.components.headers),
  ]);
  for (const name of named)
    assert.ok(described.has(name), `${name} is named in the code but not described in the OpenAPI document`);
  for (const name of described)
    if (name.startsWith("x-gateway-")) assert.ok(named.has(name), `${name} is described but the code never names it`);
  // Every description says something, and every reference resolves to a component.
  for (const header of DOCUMENTED_HEADERS) assert.ok(header.description.length > 20, header.name);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [verb, op] of Object.entries(item)) {
      for (const name of requestHeaders(op)) assert.ok(document.components.parameters[name], name);
      for (const status of Object.keys(op.responses)) {
        for (const name of responseHeaders(verb, path, Number(status.replace("XX", "00"))))
          assert.ok(name in document.components.headers, name);
      }
    }
  }
});

test("chat completions: the cache's request headers and every answer header of an inference call", () => {
  const chat = validator.operation("POST", "/api/v1/chat/completions");
  assert.equal(requestHeaders(chat).sort(), ["cache-control", "x-gateway-cache-ttl", "x-request-id", "x-session-id"]);
  assert.equal(responseHeaders("POST", "/api/v1/chat/completions", 200).sort(), [
    "x-gateway-cache",
    "x-gateway-content-flagged",
    "x-gateway-overhead-ms",
    "x-gateway-provider-key",
    "x-gateway-upstream-ms",
    ...RATE_LIMIT,
    "x-request-id",
  ]);
  assert.is(document.components.parameters["x-gateway-cache-ttl"]?.in, "header");
  assert.equal(document.components.headers["x-gateway-cache"]?.schema.enum, ["hit", "miss", "bypass"]);
});

test("each header goes with its kind of route only", () => {
  // Embeddings are cached but pick no key by session.
  const embeddings = validator.operation("POST", "/api/v1/embeddings");
  assert.ok(requestHeaders(embeddings).includes("x-gateway-cache-ttl"));
  assert.not.ok(requestHeaders(embeddings).includes("x-session-id"));
  // Decisions reach a provider, uncached.
  const decision = validator.operation("POST", "/api/alpha/decisions");
  assert.not.ok(requestHeaders(decision).includes("x-gateway-cache-ttl"));
  assert.ok(responseHeaders("POST", "/api/alpha/decisions", 200).includes("x-gateway-upstream-ms"));
  assert.not.ok(responseHeaders("POST", "/api/alpha/decisions", 200).includes("x-gateway-cache"));
  // A route that calls no provider: the request id and the gateway's overhead only.
  const key = validator.operation("GET", "/api/v1/key");
  assert.equal(requestHeaders(key), ["x-request-id"]);
  assert.equal(responseHeaders("GET", "/api/v1/key", 200).sort(), ["x-gateway-overhead-ms", "x-request-id"]);
  assert.ok(requestHeaders(validator.operation("POST", "/api/v1/batches")).includes("idempotency-key"));
  // The generation id goes with the Responses and Messages answers only.
  assert.ok(responseHeaders("POST", "/api/v1/responses", 200).includes("x-gateway-generation-id"));
  assert.not.ok(responseHeaders("POST", "/api/v1/chat/completions", 200).includes("x-gateway-generation-id"));
});

test(
  "every error answer: " +
    "Retry-After (429, 503), the rate limits' state (an inference call's 429), the request id and the overhead",
  () => {
    assert.equal(responseHeaders("GET", "/api/v1/key", 401).sort(), [
      "retry-after",
      "x-gateway-overhead-ms",
      ...RATE_LIMIT,
      "x-request-id",
    ]);
    assert.match(document.components.headers["retry-after"]?.description ?? "", /429/);
  },
);

test.run();
