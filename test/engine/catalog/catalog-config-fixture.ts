import * as assert from "uvu/assert";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { writeCatalogFile } from "../../support/catalog-file.js";

/** What the catalog file suites share: a small valid document to vary, its environment, and a check of a refusal. */
export type Json = Record<string, unknown>;

export const SECRET = "sk-live-7d1e2f3a4b5c6d7e8f9a";
export const ENV = { OPENAI_KEY: SECRET, ANTHROPIC_KEY: "sk-ant-0f9e8d7c6b5a", EU_HOST: "eu.upstream.example" };

export function provider(overrides: Json = {}): Json {
  return {
    slug: "openai",
    kind: "openai",
    base_url: "https://api.openai.com/v1",
    api_key: "${OPENAI_KEY}",
    ...overrides,
  };
}

export function model(overrides: Json = {}, endpoint: Json = {}): Json {
  return {
    id: "openai/gpt-4o",
    name: "GPT-4o",
    context_length: 128000,
    endpoints: [
      {
        provider: "openai",
        upstream_model_id: "gpt-4o",
        pricing: { prompt: "0.0000025", completion: "0.00001" },
        ...endpoint,
      },
    ],
    ...overrides,
  };
}

export function config(overrides: Json = {}): Json {
  return { providers: [provider()], models: [model()], ...overrides };
}

export async function load(document: Json | string, extension?: string, env: Record<string, string> = ENV) {
  return loadCatalogFile(await writeCatalogFile(document, extension), env);
}

/** Loading fails with one message naming the file, the path and the rule; no secret in it. */
export async function assertRejects(
  document: Json | string,
  pattern: RegExp,
  extension?: string,
  env: Record<string, string> = ENV,
): Promise<string> {
  const file = await writeCatalogFile(document, extension);
  try {
    await loadCatalogFile(file, env);
  } catch (err) {
    assert.instance(err, Error);
    const message = (err as Error).message;
    assert.ok(message.startsWith(`GATEWAY_CONFIG ${file}: `), message);
    assert.match(message, pattern);
    assert.not.ok(message.includes(SECRET), "no secret value in the message");
    return message;
  }
  assert.unreachable(`expected ${pattern} to be refused`);
  return "";
}
