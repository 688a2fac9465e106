import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import type { InferenceGateway } from "./inference-gateway.js";
import { at, call } from "./http.js";

/**
 * A new API key with new guardrails of these fields (content filters, limits…) assigned to it, made
 * with the management key: each test gets guardrails of its own, so that no test depends on
 * another's.
 */
export async function keyAndGuardrails(
  env: InferenceGateway,
  ...guardrails: JsonObject[]
): Promise<{ key: string; ids: string[] }> {
  const ids: string[] = [];
  const res = await call(env.gw.url, "POST", "/api/v1/keys", {
    key: env.gw.key,
    body: { name: `k-${Math.random().toString(36).slice(2)}` },
  });
  assert.is(res.status, 201, res.text);
  const hash = String(at(res.body, "data", "hash"));
  for (const body of guardrails) {
    const created = await call(env.gw.url, "POST", "/api/v1/guardrails", {
      key: env.gw.key,
      body: { name: `g-${Math.random().toString(36).slice(2)}`, ...body },
    });
    assert.is(created.status, 201, created.text);
    ids.push(String(at(created.body, "data", "id")));
    const assigned = await call(env.gw.url, "POST", `/api/v1/guardrails/${ids.at(-1)!}/assignments/keys`, {
      key: env.gw.key,
      body: { key_hashes: [hash] },
    });
    assert.is(assigned.status, 200, assigned.text);
  }
  return { key: String(at(res.body, "key")), ids };
}

/** keyAndGuardrails, when the test needs only the key. */
export async function keyWith(env: InferenceGateway, ...guardrails: JsonObject[]): Promise<string> {
  return (await keyAndGuardrails(env, ...guardrails)).key;
}
