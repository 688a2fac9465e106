import type { ServiceImpl } from "@connectrpc/connect";
import type { DecisionsService } from "../../../gen/gateway/alpha/decisions_pb.js";
import type { InferenceRuntime } from "../../engine/inference/inference-runtime.js";
import { createDecision } from "./create-decision.js";

/** POST /api/alpha/decisions: a classifier built on chat models with logprobs (create-decision.ts). */
export function decisionsService(runtime: InferenceRuntime): ServiceImpl<typeof DecisionsService> {
  return {
    createDecision: (req, ctx) => createDecision(runtime, req, ctx),
  };
}
