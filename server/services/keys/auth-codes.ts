import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { Op } from "sequelize";
import { ResetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import { CodeChallengeMethod, CodeChallengeMethodSchema, type KeysService } from "../../../gen/gateway/v1/keys_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { storedUsd } from "../../engine/index.js";
import { findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { wireName } from "../../../wire/enums.js";
import { AuthCodeRow } from "../../platform/db/governance-models.js";
import type { Deps } from "../deps.js";
import { isMember } from "../members/member-store.js";
import { appIdFor, lockCodeChallenge } from "./auth-code-store.js";
import { callbackTarget } from "./callback-url.js";
import { futureDate, issueKey } from "./key-issuer.js";
import { authCodeHash, CODE_LIFETIME_MS, newAuthCode, verifierMatches, type ChallengeMethod } from "./pkce.js";
import { parseUtcSeconds } from "./utc-timestamp.js";

/**
 * The authorization-code (PKCE) flow (docs/api/endpoints.md): a management key issues a short-lived,
 * single-use code; whoever holds it (and the verifier, when the code has a challenge) exchanges it
 * for a key in the code's organization and workspace, owned by the member who issued the code.
 */
export function authCodeHandlers({
  sequelize,
}: Deps): Pick<ServiceImpl<typeof KeysService>, "createAuthCode" | "exchangeAuthCode"> {
  return {
    async createAuthCode(req, ctx) {
      const caller = callerOf(ctx);
      const target = callbackTarget(req.callbackUrl);
      const challengeMethod = methodOf(req.codeChallengeMethod);
      if (challengeMethod && req.codeChallenge === undefined) {
        throw gatewayError(400, "code_challenge_method needs a code_challenge");
      }
      const keyExpiresAt =
        req.expiresAt === undefined ? null : futureDate(parseUtcSeconds(req.expiresAt, "expires_at"));
      const workspace = req.workspaceId ? await findWorkspace(caller, req.workspaceId) : undefined;
      const { code, codeHash } = newAuthCode();
      const now = new Date();

      const row = await sequelize.transaction(async (transaction) => {
        if (req.codeChallenge !== undefined) {
          await lockCodeChallenge(sequelize, caller.organization.id, req.codeChallenge, transaction);
          const pending = await AuthCodeRow.count({
            where: {
              ...inOrganization(caller),
              codeChallenge: req.codeChallenge,
              usedAt: null,
              expiresAt: { [Op.gt]: now },
            },
            transaction,
          });
          if (pending > 0)
            throw gatewayError(409, "An unused authorization code already exists for this code_challenge");
        }
        return AuthCodeRow.create(
          {
            codeHash,
            ...inOrganization(caller),
            appId: (await appIdFor(sequelize, caller.organization.id, target, transaction)).toString(),
            workspaceId: workspace?.id ?? caller.key.workspaceId,
            creatorUserId: caller.key.creatorUserId ?? null,
            callbackUrl: req.callbackUrl,
            codeChallenge: req.codeChallenge ?? null,
            codeChallengeMethod: req.codeChallenge === undefined ? null : (challengeMethod ?? "S256"),
            limitMicros: storedUsd(req.limit, "limit"),
            limitReset: wireName(ResetIntervalSchema, req.usageLimitType) ?? null,
            keyExpiresAt,
            // Hostnames are ASCII (punycode), so slicing keeps the default within the 100-character rule.
            keyLabel: req.keyLabel ?? target.host.slice(0, 100),
            spawnAgent: req.spawnAgent ?? null,
            spawnCloud: req.spawnCloud ?? null,
            expiresAt: new Date(now.getTime() + CODE_LIFETIME_MS),
            createdAt: now,
          },
          { transaction },
        );
      });
      return { data: { id: code, appId: BigInt(row.appId), createdAt: timestampFromDate(row.createdAt) } };
    },

    async exchangeAuthCode(req) {
      const requestedMethod = methodOf(req.codeChallengeMethod);
      return sequelize.transaction(async (transaction) => {
        // The row lock makes concurrent exchanges of one code queue up; all but the first see used_at.
        const row = await AuthCodeRow.findByPk(authCodeHash(req.code), { transaction, lock: transaction.LOCK.UPDATE });
        // Messages never repeat the code: it is a credential.
        if (!row) throw gatewayError(403, "Unknown authorization code");
        if (row.usedAt) throw gatewayError(403, "This authorization code has already been used");
        if (row.expiresAt.getTime() <= Date.now()) throw gatewayError(403, "This authorization code has expired");
        if (row.keyExpiresAt && row.keyExpiresAt.getTime() <= Date.now()) {
          throw gatewayError(
            403,
            "The key this authorization code grants would already be expired (its expires_at has passed)",
          );
        }

        if (row.codeChallenge !== null) {
          const storedMethod = (row.codeChallengeMethod ?? "S256") as ChallengeMethod;
          if (req.codeVerifier === undefined || req.codeVerifier === "") {
            throw gatewayError(
              400,
              "code_verifier is required: this authorization code was created with a code_challenge",
            );
          }
          if (requestedMethod && requestedMethod !== storedMethod) {
            throw gatewayError(
              400,
              `code_challenge_method must be ${storedMethod}, the method this authorization code was created with`,
            );
          }
          if (!verifierMatches(storedMethod, row.codeChallenge, req.codeVerifier)) {
            throw gatewayError(403, "code_verifier does not match the code_challenge of this authorization code");
          }
        }

        if (row.creatorUserId !== null && !(await isMember(row.organizationId, row.creatorUserId, transaction))) {
          throw gatewayError(403, "The member who authorized this code is no longer in the organization");
        }
        await row.update({ usedAt: new Date() }, { transaction });
        const { row: issued, secret } = await issueKey(
          {
            organizationId: row.organizationId,
            workspaceId: row.workspaceId,
            creatorUserId: row.creatorUserId,
            name: row.keyLabel,
            isManagement: false,
            limitMicros: row.limitMicros,
            limitReset: row.limitReset,
            includeByokInLimit: false,
            expiresAt: row.keyExpiresAt,
          },
          transaction,
        );
        return { key: secret, userId: issued.creatorUserId ?? undefined };
      });
    },
  };
}

/** The wire name of a challenge method; undefined when none was given. */
function methodOf(method: CodeChallengeMethod): ChallengeMethod | undefined {
  if (method === CodeChallengeMethod.UNSPECIFIED) return undefined;
  return wireName(CodeChallengeMethodSchema, method) as ChallengeMethod;
}
