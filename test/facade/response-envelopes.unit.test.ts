import { readFileSync } from "node:fs";
import path from "node:path";
import { hasOption, type DescMessage } from "@bufbuild/protobuf";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { RouteTable, type Route } from "../../facade/route-table.js";
import { envelope, raw_reply_message } from "../../gen/gateway/v1/options_pb.js";
import { optionOf } from "../../wire/proto-options.js";
import { allServices } from "../../wire/services.js";

/**
 * The API's rule (docs/response-envelopes.md): "most successful responses wrap the record in an
 * object with a `data` field; exceptions are named in the endpoint descriptions". The facade
 * renders the response message as it is, so the rule is a property of the protos: every REST route
 * answers a message with a `data` field (a record, or a list with `has_more`/`total_count`) unless
 * it is one of the exceptions below, each with the reason it keeps its own shape.
 * docs/response-envelopes.md is the table of all of them; this test keeps it complete.
 */
const EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ["DELETE /api/v1/keys/{hash}", "deletion confirmation {deleted}"],
  ["POST /api/v1/auth/keys", "OpenRouter's code exchange {key, user_id}"],
  ["DELETE /api/v1/organization/members/{user_id}", "deletion confirmation {deleted}"],
  ["DELETE /api/v1/workspaces/{workspace_ref}", "deletion confirmation {deleted}"],
  ["DELETE /api/v1/workspaces/{workspace_ref}/budgets/{interval}", "{deleted: true}"],
  ["DELETE /api/v1/guardrails/{id}", "deletion confirmation {deleted}"],
  ["POST /api/v1/guardrails/{id}/assignments/keys", "count {assigned_count}, as for members"],
  ["POST /api/v1/guardrails/{id}/assignments/keys/remove", "count {unassigned_count}"],
  ["POST /api/v1/guardrails/{id}/assignments/members", "{assigned_count}"],
  ["POST /api/v1/guardrails/{id}/assignments/members/remove", "count {unassigned_count}"],
  ["DELETE /api/v1/byok/{id}", "deletion confirmation {deleted}"],
  ["DELETE /api/v1/private-endpoints/{id}", "deletion confirmation {deleted}"],
  ["GET /api/v1/models/{author}/{slug}", "OpenAI's retrieve model: the model object itself"],
  ["GET /api/v1/models/{id}", "OpenAI's retrieve model (the SDK's encoded slash): the model object itself"],
  ["POST /api/v1/chat/completions", "the provider's wire shape (OpenAI chat completion, or SSE chunks)"],
  ["POST /api/v1/responses", "the provider's wire shape (OpenAI Responses)"],
  ["POST /api/v1/messages", "the provider's wire shape (Anthropic Messages)"],
  ["POST /api/v1/batches", "the Batch itself"],
  ["GET /api/v1/batches/{id}", "the Batch itself, not wrapped in data"],
  ["POST /api/v1/batches/{id}/cancel", "the Batch itself, as GET /batches/{id} (OpenAI's cancel)"],
  ["DELETE /api/v1/batches/{id}", "{id, object, deletion}"],
  ["POST /api/v1/files", "File, not wrapped in data"],
  ["GET /api/v1/files/{file_id}", "File"],
  ["DELETE /api/v1/files/{file_id}", "OpenAI's file deletion {id, type, deleted}"],
  ["GET /api/v1/files/{file_id}/content", "the file's bytes"],
  ["POST /api/v1/videos", "the video job, as GET /videos/{jobId} (OpenRouter's submission answer)"],
  ["GET /api/v1/videos/{job_id}", "not wrapped in data"],
  ["GET /api/v1/videos/{job_id}/content", "the video's bytes"],
  ["POST /api/alpha/decisions", "{id, model, provider, usage, answers}"],
  ["DELETE /api/v1/interns/{intern_id}", "teardown started {deleting: true}"],
  ["POST /api/v1/interns/{intern_id}/chat/completions", "SSE chunks, or {session_id, status}"],
  ["GET /api/v1/interns/{intern_id}/daemon", "{origin, token}"],
  ["DELETE /api/v1/vault/interns/{intern_id}/secrets/{name}", "204 without a body"],
  ["DELETE /api/v1/vault/secrets/{name}", "204 without a body"],
]);

const test = suite("response envelopes");
const routes = RouteTable.fromServices(allServices).routes;
const nameOf = (route: Route) => `${route.verb} ${route.template}`;

/**
 * Whether the route answers `{data: …}`: a JSON message (not raw bytes, not a stream envelope) with
 * a `data` field.
 */
function wrapped(route: Route): boolean {
  const output = rawReplyOf(route) ?? route.method.output;
  if (output.typeName === "google.api.HttpBody" || hasOption(output, envelope)) return false;
  return output.fields.some((field) => field.name === "data");
}

/** The message a raw JSON answer is (`(gateway.v1.raw_reply_message)`), declared beside the method. */
function rawReplyOf(route: Route): DescMessage | undefined {
  const name = optionOf(route.method, raw_reply_message);
  return name === "" ? undefined : route.method.parent.file.messages.find((m) => m.typeName === name);
}

test("every route wraps its record in data unless it is a named exception", () => {
  const unwrapped = routes.filter((route) => !wrapped(route) && !EXCEPTIONS.has(nameOf(route))).map(nameOf);
  assert.equal(unwrapped, [], "routes answering a bare record");
  const stale = [...EXCEPTIONS.keys()].filter(
    (name) => !routes.some((route) => nameOf(route) === name && !wrapped(route)),
  );
  assert.equal(stale, [], "exceptions that name no unwrapped route");
});

test("intern records (create, get, update, provision, suspend) answer {data}", () => {
  const records = ["CreateIntern", "GetIntern", "UpdateIntern", "ProvisionIntern", "SuspendIntern"];
  for (const name of records) {
    const route = routes.find((r) => r.method.name === name)!;
    assert.equal(
      route.method.output.fields.map((f) => f.name),
      ["data"],
      name,
    );
  }
});

test("docs/response-envelopes.md lists every route", () => {
  const doc = readFileSync(path.join(import.meta.dirname, "../../docs/response-envelopes.md"), "utf8");
  const missing = routes
    .map(nameOf)
    .filter((name) => !doc.includes(`\`${name.replace(" /api/v1", " ").replace(" /api/alpha", " {alpha_url}")}\``));
  assert.equal(missing, [], "routes missing from the table");
});

test.run();
