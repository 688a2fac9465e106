import type { Caller } from "../../platform/rpc/auth.js";
import type { KeyGovernance } from "../governance/key-governance.js";

/** Everything an inference call needs to know about its caller: the key and what governs it. */
export interface CallerContext extends KeyGovernance {
  caller: Caller;
}
