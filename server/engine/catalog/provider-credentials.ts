/**
 * A provider entry's credentials and kind settings in GATEWAY_CONFIG (docs/providers.md): its key
 * or pool of keys, Azure's API version, whether the host serves the Responses API, Bedrock's AWS
 * credentials, a Google service account.
 * Secrets are never echoed in a rule's text.
 *
 * @module
 */
import fs from "node:fs";
import type { ProviderKind, ProviderSettings } from "../providers/provider.js";
import { poolKey, type PoolKey } from "../key-pools/pool-key.js";
import { child, type ConfigReader, item } from "./config-reader.js";

type Env = Record<string, string | undefined>;
type Entry = Record<string, unknown>;

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const POOL_KEY_FIELDS = ["key", "weight"] as const;
const AWS_FIELDS = ["region", "access_key_id", "secret_access_key", "session_token"] as const;
const MAX_WEIGHT = 1_000;
const API_VERSION = {
  pattern: /^(v1|\d{4}-\d{2}-\d{2}(-preview)?)$/,
  description: 'an Azure API version: "v1" or a date such as "2024-10-21"',
};
const AWS_REGION = { pattern: /^[a-z]{2}(-[a-z]+)+-\d+$/, description: "an AWS region such as us-east-1" };
/** Which settings a kind reads; a setting on another kind is a mistake worth an error. */
const SETTING_KINDS: Record<string, readonly string[]> = {
  api_version: ["azure"],
  responses_api: ["openai", "azure"],
  aws: ["bedrock"],
  google_service_account: ["google"],
};

/** `${NAME}` references replaced from the environment, so the file need not hold secrets. */
export function substituteEnv(reader: ConfigReader, text: string, path: string, env: Env): string {
  return text.replace(ENV_REFERENCE, (_reference, name: string) => {
    const value = env[name];
    if (value === undefined || value === "")
      reader.fail(path, `refers to the environment variable ${name}, which is not set`);
    return value;
  });
}

export function readProviderSettings(
  reader: ConfigReader,
  p: Entry,
  path: string,
  kind: ProviderKind,
  env: Env,
): ProviderSettings | undefined {
  for (const [field, kinds] of Object.entries(SETTING_KINDS)) {
    if (p[field] !== undefined && !kinds.includes(kind))
      reader.fail(child(path, field), `applies only to providers of kind ${kinds.join(" or ")}`);
  }
  const settings: ProviderSettings = {};
  if (kind === "azure") settings.apiVersion = reader.string(p.api_version, child(path, "api_version"), API_VERSION);
  if (p.responses_api !== undefined)
    settings.responsesApi = readResponsesApi(
      reader,
      p.responses_api,
      child(path, "responses_api"),
      settings.apiVersion,
    );
  if (p.aws !== undefined) settings.aws = readAws(reader, p.aws, child(path, "aws"), env);
  if (p.google_service_account !== undefined)
    settings.googleServiceAccount = readServiceAccount(
      reader,
      p.google_service_account,
      child(path, "google_service_account"),
      env,
    );
  return Object.keys(settings).length > 0 ? settings : undefined;
}

/**
 * The provider's keys: `api_key` (one; "" for a provider that needs none), or `api_keys` (a pool:
 * each a string or `{key, weight}`). Bedrock with `aws` and Google with a service account need
 * neither; their one "key" is then the secret that error scrubbing covers.
 */
export function readKeys(
  reader: ConfigReader,
  p: Entry,
  path: string,
  env: Env,
  settings: ProviderSettings | undefined,
): PoolKey[] {
  const signed = settings?.aws ?? settings?.googleServiceAccount;
  const given = ["api_key", "api_keys"].filter((field) => p[field] !== undefined);
  if (given.length > 1) reader.fail(child(path, "api_keys"), "cannot be given with api_key: use one or the other");
  if (signed) {
    if (given.length > 0)
      reader.fail(
        child(path, given[0]!),
        `cannot be given with ${settings?.aws ? "aws" : "google_service_account"}: ` +
          "the call is signed with those credentials",
      );
    return [poolKey(settings?.aws?.secretAccessKey ?? settings?.googleServiceAccount?.privateKey ?? "", 1, 0)];
  }
  if (p.api_keys === undefined) {
    const keyPath = child(path, "api_key");
    if (typeof p.api_key !== "string")
      reader.fail(
        keyPath,
        'is required: a string, e.g. "${OPENAI_API_KEY}" to read it ' +
          'from the environment ("" for none), or api_keys for a pool',
      );
    return [poolKey(substituteEnv(reader, p.api_key, keyPath, env), 1, 0)];
  }
  const listPath = child(path, "api_keys");
  const keys = reader.list(p.api_keys, listPath, { nonEmpty: true }).map((entry, index) => {
    const at = item(listPath, index);
    const written = typeof entry === "string" ? { key: entry } : reader.object(entry, at, POOL_KEY_FIELDS);
    const keyPath = typeof entry === "string" ? at : child(at, "key");
    if (typeof written.key !== "string" || written.key === "")
      reader.fail(keyPath, 'is required: a non-empty string, e.g. "${OPENAI_KEY_A}"');
    const weight = reader.optionalInteger(written.weight, child(at, "weight"), 1, MAX_WEIGHT) ?? 1;
    return poolKey(substituteEnv(reader, written.key, keyPath, env), weight, index);
  });
  keys.forEach((key, index) => {
    if (keys.findIndex((other) => other.fingerprint === key.fingerprint) !== index)
      reader.fail(item(listPath, index), "is the same key as an earlier entry");
  });
  return keys;
}

/**
 * Whether the host serves OpenAI's Responses API (POST /responses then goes to it natively). Azure
 * serves it on its v1 surface only: a dated api_version has no such path.
 */
function readResponsesApi(reader: ConfigReader, value: unknown, path: string, apiVersion: string | undefined): boolean {
  const speaks = reader.boolean(value, path, false);
  if (speaks && apiVersion !== undefined && apiVersion !== "v1")
    reader.fail(path, 'needs api_version "v1": Azure serves the Responses API on its v1 surface only');
  return speaks;
}

function readAws(reader: ConfigReader, value: unknown, path: string, env: Env): NonNullable<ProviderSettings["aws"]> {
  const aws = reader.object(value, path, AWS_FIELDS);
  const secret = (field: string) =>
    substituteEnv(reader, reader.string(aws[field], child(path, field)), child(path, field), env);
  const sessionToken = aws.session_token === undefined ? undefined : secret("session_token");
  return {
    region: reader.string(aws.region, child(path, "region"), AWS_REGION),
    accessKeyId: secret("access_key_id"),
    secretAccessKey: secret("secret_access_key"),
    ...(sessionToken === undefined ? {} : { sessionToken }),
  };
}

/** The path of a service account's JSON key file (as Google issues it), read once at start. */
function readServiceAccount(
  reader: ConfigReader,
  value: unknown,
  path: string,
  env: Env,
): NonNullable<ProviderSettings["googleServiceAccount"]> {
  const file = substituteEnv(reader, reader.string(value, path), path, env);
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return reader.fail(path, "must name a readable JSON key file of a Google service account");
  }
  const key = typeof json === "object" && json !== null ? (json as Entry) : {};
  if (typeof key.client_email !== "string" || typeof key.private_key !== "string")
    reader.fail(path, "must name a service account key file with client_email and private_key");
  return {
    clientEmail: key.client_email,
    privateKey: key.private_key,
    ...(typeof key.token_uri === "string" ? { tokenUri: key.token_uri } : {}),
    keyFile: file,
  };
}
