import {
  UpstreamError,
  findByokProvider,
  providerFor,
  requiredPart,
  toGatewayError,
  usableCredential,
} from "../../engine/index.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import type { ProviderKind, UpstreamTarget } from "../../engine/providers/provider.js";
import type { ProviderFileApi } from "../../engine/providers/files-api.js";
import type { WorkspaceScope } from "../../platform/rpc/scope.js";
import type { FileProvider } from "./file-store.js";

/**
 * Files kept on a provider (`provider=openai|anthropic`) are stored, read, listed and deleted with
 * the workspace's own key for that provider (its newest enabled BYOK credential), never with the
 * gateway's: they belong to the caller's provider account. The API is reached at the base URL of
 * the GATEWAY_CONFIG provider with that slug, else at the provider's public API.
 */
export interface ProviderFileAccess {
  kind: FileProvider;
  api: ProviderFileApi;
  /** For metadata calls: the provider's configured time limit. */
  target: UpstreamTarget;
  /** For uploads, whose answer comes only after the whole file went up. */
  uploadTarget: UpstreamTarget;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export async function providerFileAccess(
  { secrets, engine: { catalog }, config, log }: Deps,
  scope: WorkspaceScope,
  kind: FileProvider,
): Promise<ProviderFileAccess> {
  const name = findByokProvider(kind)?.name ?? kind;
  const credential = await usableCredential(secrets.masterKey, { ...scope, provider: kind });
  if (credential.state === "missing") {
    throw gatewayError(
      400,
      `provider=${kind} keeps files on ${name} with the workspace's own ${name} key, ` +
        "and the workspace has none; a management key can add one (POST /api/v1/byok)",
    );
  }
  if (credential.state === "unreadable") {
    log.warn({ credential: credential.id }, "BYOK credential cannot be opened with the current master key");
    throw gatewayError(
      400,
      `The workspace's ${name} key cannot be used (it was stored under another master key); ` +
        "add it again (POST /api/v1/byok)",
    );
  }
  const configured = catalog.providers.get(kind);
  const target: UpstreamTarget = {
    kind,
    baseUrl: configured?.baseUrl ?? providerFor(kind).publicBaseUrl,
    apiKey: credential.secret,
    upstreamModelId: "",
    timeoutMs: configured?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  return {
    kind,
    api: requiredPart(kind, "files"),
    target,
    uploadTarget: { ...target, timeoutMs: Math.max(target.timeoutMs, config.requestTimeoutMs) },
  };
}

/**
 * A failed provider call as the caller sees it: a file the provider does not know is a 404, a
 * refused key is the workspace's own key being refused (502), the rest as for inference calls.
 */
export function providerFileError(err: unknown, kind: ProviderKind, fileId?: string): unknown {
  if (!(err instanceof UpstreamError)) return err;
  const status = err.failure === "status" ? err.options.status : undefined;
  if (status === 404 && fileId !== undefined) return gatewayError(404, `File ${fileId} not found on ${kind}`);
  if (status === 401 || status === 403)
    return gatewayError(502, `Provider ${kind} refused the workspace's own key (upstream status ${status})`);
  return toGatewayError(err, kind);
}
