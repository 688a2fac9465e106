import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ByokService } from "../../../gen/gateway/v1/byok_pb.js";
import { DeletedResponseSchema } from "../../../gen/gateway/v1/common_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { findInOrganization, findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { seal } from "../../platform/secrets/secret-box.js";
import { ByokCredentialRow } from "../../platform/db/governance-models.js";
import type { Deps } from "../deps.js";
import { requireByokProvider } from "../../engine/index.js";
import { maskProviderKey, toByokKey } from "./byok-view.js";

/**
 * Provider credentials of a workspace (OpenRouter /byok). The raw key is sealed under the master
 * key, bound to its row id, before it reaches the database, and is never returned or logged; reads
 * here do not even load the sealed form (only byok-credentials.ts opens it).
 */
export function byokService({ secrets }: Deps): Partial<ServiceImpl<typeof ByokService>> {
  return {
    async createByokKey(req, ctx) {
      const caller = callerOf(ctx);
      const provider = requireByokProvider(req.provider, "provider");
      // The key is sent upstream in an HTTP header, where whitespace and control characters
      // cannot travel; saying so now beats a credential that can never work.
      if (!/^[\x21-\x7e]+$/.test(req.key)) throw gatewayError(400, "key must be printable ASCII without spaces");
      const workspaceId = req.workspaceId ? (await findWorkspace(caller, req.workspaceId)).id : caller.key.workspaceId;
      // The id exists before the row so the sealed key can be bound to it.
      const id = randomUUID();
      const row = await ByokCredentialRow.create({
        id,
        ...inOrganization(caller),
        workspaceId,
        provider: provider.slug,
        name: req.name ?? null,
        label: maskProviderKey(req.key),
        sealedKey: seal(secrets.masterKey, req.key, id),
        disabled: req.disabled ?? false,
      });
      return { data: toByokKey(row) };
    },

    async listByokKeys(req, ctx) {
      const caller = callerOf(ctx);
      const workspaceId = req.workspaceId ? (await findWorkspace(caller, req.workspaceId)).id : caller.key.workspaceId;
      const { rows, totalCount } = await findPage(ByokCredentialRow, req, {
        where: { ...inOrganization(caller), workspaceId, ...(req.provider ? { provider: req.provider } : {}) },
        attributes: { exclude: ["sealedKey"] },
        order: [
          ["createdAt", "DESC"],
          ["id", "ASC"],
        ],
      });
      return { data: rows.map(toByokKey), totalCount };
    },

    async getByokKey(req, ctx) {
      return { data: toByokKey(await findCredential(callerOf(ctx), req.id)) };
    },

    async deleteByokKey(req, ctx) {
      const row = await findCredential(callerOf(ctx), req.id);
      await row.destroy();
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}

function findCredential(caller: Caller, id: string): Promise<ByokCredentialRow> {
  // The sealed key is not loaded: nothing here needs it.
  return findInOrganization(ByokCredentialRow, caller, { id: id.toLowerCase() }, "BYOK credential not found", {
    attributes: { exclude: ["sealedKey"] },
  });
}
