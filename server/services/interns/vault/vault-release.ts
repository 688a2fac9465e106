import { UUID_PATTERN } from "../../../../wire/text-rules.js";
import type { Deps } from "../../deps.js";
import type { InternStatusName } from "../intern-record.js";
import { readInternById } from "../intern-store.js";
import { requestTargetOf } from "./vault-hosts.js";
import { releasableSecrets } from "./vault-store.js";

const RELEASING: readonly InternStatusName[] = ["provisioning", "running"];

/**
 * Release of vault secrets to an intern's outbound HTTP request (docs/api/vault.md): the intern's effective
 * secrets (its own vault, then an attached one, then the workspace's) whose hosts contain exactly
 * the URL's hostname. Never its parent domain, a sub-domain, another port's idea of the same name,
 * or any other host; legacy rows (no hosts) are never released. To an http URL only the secrets
 * stored with `allow_http` go, so a value does not cross the network in clear text unless its
 * owner said so; the rest never even reach the intern's host. Call it for every request the tool
 * sends, redirects included, with that request's URL: a redirect to another host, or down to
 * http, then carries no secret. A value whose ciphertext was altered makes the call throw
 * (nothing released).
 */
export async function secretsForUrl(
  deps: Pick<Deps, "sequelize" | "secrets">,
  internId: string,
  url: string | URL,
): Promise<Array<{ name: string; value: string }>> {
  const target = requestTargetOf(url);
  if (target === undefined) return [];
  // Today the id is the host manager's own (a DB id), never the host's word. The check keeps this
  // release fail-closed for any caller: a non-UUID would be a Postgres cast error, not "nothing".
  if (!UUID_PATTERN.test(internId)) return [];
  const intern = await readInternById(deps.sequelize, internId);
  // Only a live intern's tool sends requests; one being stopped or deleted gets nothing.
  if (!intern || !RELEASING.includes(intern.status)) return [];
  return releasableSecrets(
    deps.sequelize,
    deps.secrets.masterKey,
    { own: intern.vaultId, attached: intern.attachedVaultId, workspaceId: intern.workspaceId },
    target,
  );
}
