/**
 * The vault API (docs/api/vault.md). The interns programme gate (404) and the refusal of regional
 * hostnames run before any handler (platform/rpc/auth.ts, engine/catalog/global-hostname.ts). Scope is the
 * key's: workspace routes act on its workspace, intern routes on one visible intern; an intern's
 * own key reaches only its intern's secrets (workspace routes and the copy, which reads the
 * workspace's, are 404 to it). Writes answer 503 while GATEWAY_VAULT_WRITES_DISABLED is set.
 * Values are never returned or logged: responses carry metadata only.
 *
 * @module
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { VaultSecretScope, type VaultService } from "../../../../gen/gateway/v1/vault_pb.js";
import { callerOf, type Caller } from "../../../platform/rpc/auth.js";
import { gatewayError } from "../../../../wire/errors.js";
import { pageOf } from "../../../platform/rpc/pagination.js";
import { requireWorkspaceKey, workspaceNotFound, workspaceOf } from "../../../platform/rpc/scope.js";
import type { Deps } from "../../deps.js";
import { internNotFound, requireVisibleIntern } from "../intern-scope.js";
import type { InternRow } from "../intern-store.js";
import { normalizeHosts } from "./vault-hosts.js";
import {
  deleteSecret,
  effectiveSecrets,
  listSecrets,
  openSealed,
  putSecret,
  sealedSecrets,
  vaultKey,
  workspaceVaultId,
  type DeleteOutcome,
  type EffectiveScope,
  type SecretMeta,
} from "./vault-store.js";

const PAGE = 100;

const SCOPES: Record<EffectiveScope, VaultSecretScope> = {
  intern: VaultSecretScope.INTERN,
  attached: VaultSecretScope.ATTACHED,
  workspace: VaultSecretScope.WORKSPACE,
};

function toSecret(meta: SecretMeta) {
  return {
    name: meta.name,
    hosts: meta.hosts ?? [],
    fingerprint: meta.fingerprint ?? undefined,
    createdAt: timestampFromDate(meta.createdAt),
    allowHttp: meta.allowHttp,
  };
}

export function vaultService(deps: Deps): ServiceImpl<typeof VaultService> {
  const { sequelize, config } = deps;
  const { masterKey } = deps.secrets;

  function requireWritable(): void {
    if (config.vaultWritesDisabled)
      throw gatewayError(503, "Vault writes are disabled on this gateway for now; reads still work", {
        retryable: true,
      });
  }

  /** The intern's own vault: every intern has one from its creation on. */
  function ownVault(intern: InternRow): string {
    if (!intern.vaultId)
      throw gatewayError(500, `Intern ${intern.id} has no vault`, { reason: "internal_error", retryable: true });
    return intern.vaultId;
  }

  function deleted(outcome: DeleteOutcome, name: string, where: string): Record<string, never> {
    if (outcome === "missing") throw gatewayError(404, `No secret named '${name}' in ${where}`);
    if (outcome === "legacy_only") {
      throw gatewayError(
        409,
        `Secret '${name}' in ${where} was stored before host-bound storage and cannot be deleted here; ` +
          `store '${name}' again with hosts to replace it`,
      );
    }
    return {};
  }

  /** The workspace's vault went away under a request: only a deletion of the workspace does that. */
  const workspaceGone = (caller: Caller) => workspaceNotFound(caller.key.workspaceId);

  /** `gone` answers a vault deleted since the request found it (with its intern, say): a 404, not a failed write. */
  async function store(
    vaultId: string,
    req: { name: string; hosts: string[]; value: string; allowHttp: boolean },
    gone: () => Error,
  ) {
    const hosts = normalizeHosts(req.hosts);
    const stored = await sequelize.transaction(async (transaction) => {
      const key = await vaultKey(sequelize, masterKey, vaultId, transaction);
      if (!key) throw gone();
      return putSecret(
        sequelize,
        key,
        { name: req.name, hosts, value: req.value, allowHttp: req.allowHttp },
        transaction,
      );
    });
    return { data: toSecret(stored) };
  }

  return {
    async putInternSecret(req, ctx) {
      const intern = await requireVisibleIntern(sequelize, callerOf(ctx), req.internId);
      requireWritable();
      return store(ownVault(intern), req, () => internNotFound(req.internId));
    },

    async listInternSecrets(req, ctx) {
      const intern = await requireVisibleIntern(sequelize, callerOf(ctx), req.internId);
      const { data, hasMore } = await listSecrets(sequelize, ownVault(intern), pageOf(req, PAGE));
      return { data: data.map(toSecret), hasMore };
    },

    async deleteInternSecret(req, ctx) {
      const intern = await requireVisibleIntern(sequelize, callerOf(ctx), req.internId);
      requireWritable();
      return deleted(await deleteSecret(sequelize, ownVault(intern), req.name), req.name, `intern ${intern.id}`);
    },

    async listInternEffectiveSecrets(req, ctx) {
      const intern = await requireVisibleIntern(sequelize, callerOf(ctx), req.internId);
      const vaults = { own: intern.vaultId, attached: intern.attachedVaultId, workspaceId: intern.workspaceId };
      const { data, hasMore } = await effectiveSecrets(sequelize, vaults, pageOf(req, PAGE));
      return { data: data.map((meta) => ({ ...toSecret(meta), scope: SCOPES[meta.scope] })), hasMore };
    },

    async putWorkspaceSecret(req, ctx) {
      const caller = callerOf(ctx);
      requireWorkspaceKey(caller);
      requireWritable();
      const vaultId = await workspaceVaultId(sequelize, masterKey, workspaceOf(caller), { create: true });
      return store(vaultId!, req, () => workspaceGone(caller));
    },

    async listWorkspaceSecrets(req, ctx) {
      const caller = callerOf(ctx);
      requireWorkspaceKey(caller);
      const vaultId = await workspaceVaultId(sequelize, masterKey, workspaceOf(caller), { create: false });
      const { data, hasMore } = await listSecrets(sequelize, vaultId, pageOf(req, PAGE));
      return { data: data.map(toSecret), hasMore };
    },

    async deleteWorkspaceSecret(req, ctx) {
      const caller = callerOf(ctx);
      requireWorkspaceKey(caller);
      requireWritable();
      const vaultId = await workspaceVaultId(sequelize, masterKey, workspaceOf(caller), { create: false });
      return deleted(await deleteSecret(sequelize, vaultId, req.name), req.name, "this workspace");
    },

    async copyWorkspaceSecretsToIntern(req, ctx) {
      const caller = callerOf(ctx);
      requireWorkspaceKey(caller);
      const intern = await requireVisibleIntern(sequelize, caller, req.internId);
      requireWritable();
      const duplicate = req.names.find((name, index) => req.names.indexOf(name) !== index);
      if (duplicate !== undefined) throw gatewayError(400, `names must be unique; '${duplicate}' is given twice`);
      const target = ownVault(intern);
      // All or nothing: every name is checked before the first copy is written.
      const copies = await sequelize.transaction(async (transaction) => {
        const sourceId = await workspaceVaultId(sequelize, masterKey, workspaceOf(caller), {
          create: false,
          transaction,
        });
        const sources = await sealedSecrets(sequelize, sourceId, req.names, transaction);
        const missing = req.names.filter((name) => !sources.has(name));
        if (missing.length > 0)
          throw gatewayError(
            404,
            `No workspace secret named ${missing.map((name) => `'${name}'`).join(", ")}; nothing was copied`,
          );
        const legacy = req.names.filter((name) => sources.get(name)!.legacy);
        if (legacy.length > 0) {
          throw gatewayError(
            409,
            `Workspace secret ${legacy.map((name) => `'${name}'`).join(", ")} has no hosts (stored ` +
              "before host-bound storage); store it again with hosts first. Nothing was copied",
          );
        }
        const sourceKey = await vaultKey(sequelize, masterKey, sourceId!, transaction);
        if (!sourceKey) throw workspaceGone(caller);
        const targetKey = await vaultKey(sequelize, masterKey, target, transaction);
        if (!targetKey) throw internNotFound(req.internId);
        const stored: SecretMeta[] = [];
        for (const name of req.names) {
          const source = sources.get(name)!;
          stored.push(
            await putSecret(
              sequelize,
              targetKey,
              { name, hosts: source.hosts!, value: openSealed(sourceKey, source), allowHttp: source.allowHttp },
              transaction,
            ),
          );
        }
        return stored;
      });
      return { data: copies.map(toSecret) };
    },
  };
}
