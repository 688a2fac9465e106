import type { ServiceImpl } from "@connectrpc/connect";
import type { DecisionsService } from "../../../gen/gateway/alpha/decisions_pb.js";
import type { Deps } from "../deps.js";
import { createDecision } from "./create-decision.js";

/** POST /api/alpha/decisions: a classifier built on chat models with logprobs (create-decision.ts). */
export function decisionsService(deps: Deps): ServiceImpl<typeof DecisionsService> {
  return {
    createDecision: (req, ctx) => createDecision(deps, req, ctx),
  };
}
