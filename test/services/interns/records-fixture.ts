import type { Test } from "uvu";
import { suite } from "../../support/suite.js";
import { startInternsGateway, type InternsEnv } from "../../support/interns.js";

/** An id no intern has. */
export const UNKNOWN_ID = "0b7f3c9e-2d41-4f6a-9e8b-5c1d2a3f4e60";
/** An intern's route, or one of its sub-routes. */
export const path = (id: string, rest = "") => `/api/v1/interns/${id}${rest}`;

/** A suite of the intern records with its own interns gateway, started before its tests and stopped after. */
export function recordsSuite(title: string): Test<{ env: InternsEnv }> {
  const test = suite<{ env: InternsEnv }>(title);
  test.before(async (ctx) => {
    ctx.env = await startInternsGateway();
  });
  test.after(async ({ env }) => {
    await env.stop();
  });
  return test;
}
