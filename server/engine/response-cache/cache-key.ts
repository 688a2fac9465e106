import { createHash } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

/**
 * The key of a cached answer: SHA-256 over the workspace, the API, the catalog model and the
 * endpoint routing chose, and the request in a canonical form (object keys sorted at every depth,
 * numbers as JavaScript writes them, so `1.0` and `1` agree). The request is the body sent
 * upstream, after the content filters' redaction; top-level fields that cannot change the answer
 * are left out: `stream` and `stream_options` (a stream is served from a plain entry and the other
 * way round), `model` (the catalog model stands for it) and `user` (an end-user id).
 */
export interface CacheScope {
  workspaceId: string;
  api: "chat" | "embeddings";
  modelId: string;
  endpointId: string;
}

const IGNORED = new Set(["stream", "stream_options", "model", "user"]);

export function cacheKey(scope: CacheScope, body: JsonObject): string {
  const hash = createHash("sha256");
  hash.update(`${scope.workspaceId}\n${scope.api}\n${scope.modelId}\n${scope.endpointId}\n`);
  hash.update(canonical(body, IGNORED));
  return hash.digest("hex");
}

/** JSON with sorted keys; `skip` applies to the top level only. */
export function canonical(value: JsonValue | undefined, skip?: ReadonlySet<string>): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item)).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined && !skip?.has(key))
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
