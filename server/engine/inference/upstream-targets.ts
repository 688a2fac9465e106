import { findByokProvider } from "../providers/byok-providers.js";
import { usableCredential } from "../providers/byok-credentials.js";
import type { CatalogEndpoint } from "../catalog/catalog.js";
import type { EngineParts } from "../engine.js";
import type { LocalSecrets } from "../../platform/secrets/local-secrets.js";
import { PrivateEndpointRow } from "../../platform/db/governance-models.js";
import { parseBaseUrl } from "../../platform/outbound/base-url.js";
import {
  createDestinationGuard,
  DestinationRefused,
  type VettedDestination,
} from "../../../egress/destination-guard.js";
import { loadTrustStore } from "../../platform/outbound/trust-store.js";
import { pinnedLookup } from "../../../egress/pinned-lookup.js";
import { UpstreamError, type ProviderSettings, type UpstreamTarget } from "../providers/provider.js";
import { providerFor } from "../providers/registry.js";
import type { CallerContext } from "./caller-context.js";
import type { KeyChoice } from "../key-pools/key-pools.js";
import type { KeyPool } from "../key-pools/key-pool.js";
import type { PoolKey } from "../key-pools/pool-key.js";

/**
 * Where one attempt goes and with whose key. A catalog endpoint uses the provider's key from
 * GATEWAY_CONFIG (one of its pool, when it lists several), or the workspace's own (BYOK) key for
 * that provider when it has one, which makes the call a BYOK call. A private endpoint always uses
 * the workspace's key for its provider, and is called like a private endpoint validation: only at
 * addresses the SSRF guard vetted, with the configured trust store, and its answers read whole are
 * bounded by GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB. A target that cannot be built fails as a
 * `connect` failure, so routing falls back to the next endpoint.
 */
export interface ResolvedTarget {
  target: UpstreamTarget;
  isByok: boolean;
  /** The pool the target's key came from, and that key, when its provider has a pool (server/engine/key-pools). */
  pooled?: { pool: KeyPool; key: PoolKey };
}

/**
 * `choice`: the call's affinity and tried keys, for a provider with a key pool. Without one (a
 * batch or video job polled later, visible only to the key that made it), the pool's first key.
 */
export type TargetResolver = (
  context: CallerContext,
  endpoint: CatalogEndpoint,
  choice?: KeyChoice,
) => Promise<ResolvedTarget>;

/** What target resolution reads: the catalog's providers, key pools, and the master key of BYOK credentials. */
export type TargetResolverDeps = Pick<EngineParts, "config" | "catalog" | "log" | "keyPools"> & {
  secrets: LocalSecrets;
};

export function createTargetResolver({ config, catalog, secrets, log, keyPools }: TargetResolverDeps): TargetResolver {
  const guard = createDestinationGuard({
    allowedHosts: config.privateEndpointAllowedHosts,
    resolveTimeoutMs: config.privateEndpointTimeoutMs,
  });
  const ca = loadTrustStore(config.privateEndpointCaFile);

  async function workspaceKey(context: CallerContext, provider: string): Promise<string | undefined> {
    if (!context.byokProviders.has(provider)) return undefined;
    const { organizationId, workspaceId } = context.caller.key;
    const credential = await usableCredential(secrets.masterKey, { organizationId, workspaceId, provider });
    if (credential.state === "found") return credential.secret;
    if (credential.state === "unreadable")
      log.warn({ credential: credential.id }, "BYOK credential cannot be opened with the current master key");
    return undefined;
  }

  return async (context, endpoint, choice) => {
    if (endpoint.privateEndpointId) return privateTarget(context, endpoint);
    const provider = catalog.providers.get(endpoint.providerSlug);
    if (!provider) throw new UpstreamError("connect", `provider ${endpoint.providerSlug} is not configured`);
    const own = await workspaceKey(context, provider.slug);
    const target = (apiKey: string, settings = provider.settings): UpstreamTarget => ({
      kind: provider.kind,
      baseUrl: provider.baseUrl,
      apiKey,
      upstreamModelId: endpoint.upstreamModelId,
      timeoutMs: provider.timeoutMs,
      ...(settings ? { settings } : {}),
    });
    // The workspace's own key replaces the gateway's credentials (AWS, a service account) too; the
    // host's own settings stay.
    if (own !== undefined) return { target: target(own, hostSettings(provider.settings)), isByok: true };
    const pool = choice ? keyPools.pool(provider.slug) : undefined;
    if (!pool || !choice) return { target: target(provider.keys[0]!.secret), isByok: false };
    const key = keyPools.choose(pool, choice);
    return { target: target(key.secret), isByok: false, pooled: { pool, key } };
  };

  /** The settings that describe the host rather than the gateway's credentials for it. */
  function hostSettings(settings: ProviderSettings | undefined): ProviderSettings | undefined {
    if (settings?.apiVersion === undefined && settings?.responsesApi === undefined) return undefined;
    return {
      ...(settings.apiVersion === undefined ? {} : { apiVersion: settings.apiVersion }),
      ...(settings.responsesApi === undefined ? {} : { responsesApi: settings.responsesApi }),
    };
  }

  async function privateTarget(context: CallerContext, endpoint: CatalogEndpoint): Promise<ResolvedTarget> {
    const row = await PrivateEndpointRow.findByPk(endpoint.privateEndpointId);
    const kind = findByokProvider(endpoint.providerSlug)?.kind;
    if (!row?.baseUrl || !kind) throw new UpstreamError("connect", "the private endpoint has no usable base URL");
    const apiKey = await workspaceKey(context, endpoint.providerSlug);
    if (!apiKey)
      throw new UpstreamError("connect", `the workspace has no ${endpoint.providerSlug} key for its private endpoint`);
    const url = parseBaseUrl(row.baseUrl);
    let addresses: VettedDestination["addresses"];
    try {
      ({ addresses } = await guard.vet(url));
    } catch (err) {
      if (err instanceof DestinationRefused) throw new UpstreamError("connect", err.message);
      throw err;
    }
    // Private endpoints name the host's root, as validation does (provider-dialects.ts); the
    // adapters expect the API's root (Anthropic's `/v1`) in the base URL.
    const baseUrl = url.toString().replace(/\/$/, "") + providerFor(kind).privateRootPath;
    return {
      target: {
        kind,
        baseUrl,
        apiKey,
        upstreamModelId: endpoint.upstreamModelId,
        timeoutMs: config.requestTimeoutMs,
        pinned: { lookup: pinnedLookup(addresses), ca: [...ca] },
        // A tenant chooses this host: its answers get a lower bound than the operator's providers'.
        maxAnswerBytes: config.privateEndpointMaxAnswerBytes,
      },
      isByok: true,
    };
  }
}
