import type { RunnableMigration } from "umzug";
import type { QueryInterface } from "sequelize";
import * as foundation from "./0001-foundation.js";
import * as governance from "./0002-governance.js";
import * as inference from "./0003-inference.js";
import * as governanceNotify from "./0004-governance-notify.js";
import * as batches from "./0005-batches.js";
import * as files from "./0006-files.js";
import * as videos from "./0007-videos.js";
import * as nativeBatches from "./0008-native-batches.js";
import * as interns from "./0009-interns.js";
import * as vault from "./0010-vault.js";
import * as internRuns from "./0011-intern-runs.js";
import * as internRuntimeLeases from "./0012-intern-runtime-leases.js";
import * as internShellUsers from "./0013-intern-shell-users.js";
import * as internSteers from "./0014-intern-steers.js";
import * as admissionLeases from "./0015-admission-leases.js";
import * as workspaceDefaultGuardrails from "./0016-workspace-default-guardrails.js";
import * as organizationOwners from "./0017-organization-owners.js";
import * as batchItemLeases from "./0018-batch-item-leases.js";
import * as ledgerRequestId from "./0019-ledger-request-id.js";
import * as ledgerByGeneration from "./0020-ledger-by-generation.js";
import * as vaultAllowHttp from "./0021-vault-allow-http.js";
import * as ledgerCacheWrites from "./0022-ledger-cache-writes.js";
import * as privateEndpointCachePrices from "./0023-private-endpoint-cache-prices.js";
import * as ledgerContentFlagged from "./0024-ledger-content-flagged.js";
import * as providerKindsFromRegistry from "./0025-provider-kinds-from-registry.js";
import * as responseCache from "./0026-response-cache.js";
import * as workspaceCacheTtl from "./0027-workspace-cache-ttl.js";
import * as rateLimits from "./0028-rate-limits.js";

/** Numbered migrations, applied in this order at start-up. Append; never edit an applied one. */
export const migrations: RunnableMigration<QueryInterface>[] = [
  { name: "0001-foundation", ...foundation },
  { name: "0002-governance", ...governance },
  { name: "0003-inference", ...inference },
  { name: "0004-governance-notify", ...governanceNotify },
  { name: "0005-batches", ...batches },
  { name: "0006-files", ...files },
  { name: "0007-videos", ...videos },
  { name: "0008-native-batches", ...nativeBatches },
  { name: "0009-interns", ...interns },
  { name: "0010-vault", ...vault },
  { name: "0011-intern-runs", ...internRuns },
  { name: "0012-intern-runtime-leases", ...internRuntimeLeases },
  { name: "0013-intern-shell-users", ...internShellUsers },
  { name: "0014-intern-steers", ...internSteers },
  { name: "0015-admission-leases", ...admissionLeases },
  { name: "0016-workspace-default-guardrails", ...workspaceDefaultGuardrails },
  { name: "0017-organization-owners", ...organizationOwners },
  { name: "0018-batch-item-leases", ...batchItemLeases },
  { name: "0019-ledger-request-id", ...ledgerRequestId },
  { name: "0020-ledger-by-generation", ...ledgerByGeneration },
  { name: "0021-vault-allow-http", ...vaultAllowHttp },
  { name: "0022-ledger-cache-writes", ...ledgerCacheWrites },
  { name: "0023-private-endpoint-cache-prices", ...privateEndpointCachePrices },
  { name: "0024-ledger-content-flagged", ...ledgerContentFlagged },
  { name: "0025-provider-kinds-from-registry", ...providerKindsFromRegistry },
  { name: "0026-response-cache", ...responseCache },
  { name: "0027-workspace-cache-ttl", ...workspaceCacheTtl },
  { name: "0028-rate-limits", ...rateLimits },
];
