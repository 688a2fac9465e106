import type { ServiceImpl } from "@connectrpc/connect";
import type { EdgeService } from "../../gen/gateway/v1/edge_pb.js";

/**
 * The questions an edge asks before it reads a request body. The auth interceptor has answered
 * by the time a handler runs (CheckCredentials is ACCESS_KEY), so the handler has nothing to add.
 */
export function edgeService(): ServiceImpl<typeof EdgeService> {
  return {
    checkCredentials: () => ({}),
  };
}
