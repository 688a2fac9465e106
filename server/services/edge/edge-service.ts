import type { ServiceImpl } from "@connectrpc/connect";
import type { EdgeService } from "../../../gen/gateway/v1/edge_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";

/**
 * The questions an edge asks before it reads a request body. The auth interceptor has answered
 * by the time a handler runs (CheckCredentials is ACCESS_KEY); the handler adds the key's label,
 * which the edge's access log names the caller by.
 */
export function edgeService(): ServiceImpl<typeof EdgeService> {
  return {
    checkCredentials: (_req, ctx) => ({ keyLabel: callerOf(ctx).key.label }),
  };
}
