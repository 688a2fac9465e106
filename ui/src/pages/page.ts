import type { CurrentKey } from "../types.js";

/** What every page is given: the signed-in key as GET /key describes it (management or not, its workspace). */
export interface PageProps {
  current: CurrentKey;
}
