import { gatewayError } from "../../../wire/errors.js";
import type { WorkspaceRow } from "../../platform/db/models.js";

/**
 * Server tools (`svc:web_search`, …) are tools the gateway would run itself. A workspace can
 * disable them: naming a disabled one is a 403. This gateway runs none of them yet, so
 * naming an enabled one is a 400 that says so rather than a silently ignored tool.
 */
export function checkServerTools(requested: readonly string[], workspace: WorkspaceRow): void {
  for (const tool of requested) {
    if (workspace.disabledServerTools?.includes(tool)) {
      throw gatewayError(403, `Server tool ${tool} is disabled in workspace ${workspace.slug}`);
    }
  }
  const [first] = requested;
  if (first) throw gatewayError(400, `Server tool ${first} is not available on this gateway`);
}
