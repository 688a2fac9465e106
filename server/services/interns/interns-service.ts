import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintError } from "sequelize";
import { UpdateInternRequestSchema, type InternsService } from "../../../gen/gateway/v1/interns_pb.js";
import type { Catalog } from "../../engine/catalog/catalog.js";
import { findCatalogModel } from "../../engine/index.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { decodeCursor, encodeCursor } from "../../platform/rpc/pagination.js";
import { requireKeyWorkspace, requireWorkspaceKey, workspaceOf } from "../../platform/rpc/scope.js";
import { UUID_PATTERN } from "../../../wire/text-rules.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import type { Deps } from "../deps.js";
import { createInternVault, isInternVaultOf } from "./vault/vault-store.js";
import { revealDaemon } from "./intern-daemon.js";
import type { InternLifecycle } from "./intern-lifecycle.js";
import type { InternStatusName } from "./intern-record.js";
import { internScopeOf, requireNotOwnKey, requireVisibleIntern } from "./intern-scope.js";
import { changeIntern, insertIntern, listInterns, type InternChange, type InternRow } from "./intern-store.js";
import { toIntern } from "./intern-view.js";

/**
 * Intern records (docs/api/interns.md, except chat): create, list, get, update, provision, suspend,
 * delete and daemon access. The chat relay lives with the runtime (its own file) and is merged in
 * beside these methods in services.ts:
 *   `{ ...internRecordsService(deps, lifecycle), ...internChatService(deps) }`.
 * The programme gate (404 outside it) and the refusal of regional hostnames run before any handler
 * (platform/rpc/auth.ts, engine/catalog/global-hostname.ts); the scope rule is intern-scope.ts.
 */
export type InternRecordMethods = Omit<ServiceImpl<typeof InternsService>, "chatCompletions">;

const DEFAULT_PAGE = 50;
const EDITABLE: readonly InternStatusName[] = ["queued", "provisioning", "running", "failed", "stopped"];

export function internRecordsService(deps: Deps, lifecycle: InternLifecycle): InternRecordMethods {
  const { sequelize } = deps;
  const { catalog } = deps.engine;

  function duplicateName(err: unknown, name: string | undefined): unknown {
    return err instanceof UniqueConstraintError
      ? gatewayError(409, `You already have an intern named '${name}' in this workspace`)
      : err;
  }

  return {
    async createIntern(req, ctx) {
      const caller = callerOf(ctx);
      requireWorkspaceKey(caller);
      requireKeyWorkspace(caller, req.workspaceId);
      const model = offeredModel(catalog, req.model);
      const owner = workspaceOf(caller);
      try {
        const intern = await sequelize.transaction(async (transaction) => {
          if (
            req.vaultId !== undefined &&
            !(await isInternVaultOf(sequelize, owner, req.vaultId.toLowerCase(), transaction))
          ) {
            throw gatewayError(404, `vault_id ${req.vaultId} is not the vault of an intern in this workspace`, {
              reason: "not_found",
              retryable: false,
            });
          }
          const id = randomUUID();
          await insertIntern(
            sequelize,
            {
              id,
              ...owner,
              name: req.name,
              description: req.description ?? null,
              instructions: req.instructions ?? null,
              model,
              attachedVaultId: req.vaultId?.toLowerCase() ?? null,
              creatorKeyHash: caller.key.hash,
              creatorUserId: caller.key.creatorUserId ?? null,
            },
            transaction,
          );
          const vaultId = await createInternVault(
            sequelize,
            deps.secrets.masterKey,
            { ...owner, internId: id },
            transaction,
          );
          const created = (await changeIntern(sequelize, id, { vaultId }, { transaction }))!;
          return req.provision ? lifecycle.provisionLocked(created, transaction) : created;
        });
        return { data: toIntern(intern) };
      } catch (err) {
        throw duplicateName(err, req.name);
      }
    },

    async listInterns(req, ctx) {
      const caller = callerOf(ctx);
      if (req.workspaceId !== undefined) requireKeyWorkspace(caller, req.workspaceId);
      const limit = req.limit ?? DEFAULT_PAGE;
      const statuses = [...new Set(req.status.flatMap((item) => item.split(",")))] as InternStatusName[];
      const rows = await listInterns(sequelize, internScopeOf(caller), {
        statuses,
        limit: limit + 1,
        after: afterCursor(req.startingAfter),
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        data: page.map(toIntern),
        hasMore,
        nextCursor: hasMore && last ? encodeCursor([last.createdAt.toISOString(), last.id]) : undefined,
      };
    },

    async getIntern(req, ctx) {
      return { data: toIntern(await requireVisibleIntern(sequelize, callerOf(ctx), req.internId)) };
    },

    async updateIntern(req, ctx) {
      const caller = callerOf(ctx);
      const intern = await requireVisibleIntern(sequelize, caller, req.internId);
      requireNotOwnKey(caller, intern);
      const changed = changedFields(UpdateInternRequestSchema, req, ["intern_id"]);
      const change: InternChange = {};
      if (changed.has("name")) {
        if (req.name === undefined) throw gatewayError(400, "name cannot be null");
        change.name = req.name;
      }
      if (changed.has("description")) change.description = req.description ?? null;
      if (changed.has("instructions")) change.instructions = req.instructions ?? null;
      if (changed.has("model")) change.model = offeredModel(catalog, req.model);
      if (!EDITABLE.includes(intern.status))
        throw gatewayError(409, `Intern ${intern.id} is ${intern.status}; an intern being deleted cannot be changed`);
      if (Object.keys(change).length === 0) return { data: toIntern(intern) };
      let updated: InternRow | undefined;
      try {
        updated = await changeIntern(sequelize, intern.id, change, { from: EDITABLE });
      } catch (err) {
        throw duplicateName(err, change.name);
      }
      if (!updated) throw gatewayError(409, `Intern ${intern.id} is being deleted and cannot be changed`);
      return { data: toIntern(updated) };
    },

    async deleteIntern(req, ctx) {
      await lifecycle.destroy(callerOf(ctx), req.internId);
      return { deleting: true };
    },

    async provisionIntern(req, ctx) {
      return { data: toIntern(await lifecycle.provision(callerOf(ctx), req.internId)) };
    },

    async suspendIntern(req, ctx) {
      return { data: toIntern(await lifecycle.suspend(callerOf(ctx), req.internId)) };
    },

    async getInternDaemon(req, ctx) {
      return revealDaemon(deps, callerOf(ctx), req.internId, ctx);
    },
  };
}

/**
 * A model the gateway offers, or null for the workspace default. `:nitro` and `:floor` choose a
 * routing order rather than a model (engine/inference/routing.ts), so the model is the part before them.
 */
function offeredModel(catalog: Catalog, model: string | undefined): string | null {
  if (model === undefined) return null;
  if (!findCatalogModel(catalog, model.replace(/:(nitro|floor)$/, "")))
    throw gatewayError(400, `model '${model}' is not offered by this gateway; GET /models lists the models`);
  return model;
}

/**
 * The (created_at, id) of `next_cursor`, exactly as `listInterns` writes it: `toISOString` of a
 * stored time and a UUID. Looser checks let through text that Postgres cannot cast (a 500):
 * `Date.parse` takes "1" and "2024-02-30T…", and year 0000 or a six-digit year survives a
 * round trip through `Date` but not the cast.
 */
const ISSUED_AT = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function isIssuedAt(text: string): boolean {
  const at = new Date(text);
  return ISSUED_AT.test(text) && !Number.isNaN(at.getTime()) && at.toISOString() === text;
}

function afterCursor(cursor: string | undefined): [string, string] | undefined {
  if (cursor === undefined) return undefined;
  const [createdAt, id] = decodeCursor(cursor, 2, {
    param: "starting_after",
    issuedAs: "next_cursor",
    accept: ([at, id]) => isIssuedAt(at!) && UUID_PATTERN.test(id!),
  });
  return [createdAt!, id!];
}
