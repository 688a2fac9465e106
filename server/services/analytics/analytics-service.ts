import type { ServiceImpl } from "@connectrpc/connect";
import type { AnalyticsService } from "../../../gen/gateway/v1/analytics_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import type { Deps } from "../deps.js";
import { queryLedger } from "./analytics-store.js";
import { analyticsMeta } from "./catalog.js";

/** GET /analytics/meta and POST /analytics/query over the usage ledger of the caller's organization. */
export function analyticsService(
  deps: Pick<Deps, "sequelize" | "engine">,
): Partial<ServiceImpl<typeof AnalyticsService>> {
  return {
    getAnalyticsMeta() {
      return { data: analyticsMeta() };
    },

    async queryAnalytics(req, ctx) {
      const { organization } = callerOf(ctx);
      // The ledger as settled, with this instance's queued calls written first.
      await deps.engine.settlement.barrier();
      return { data: await queryLedger(deps.sequelize, organization.id, req, new Date()) };
    },
  };
}
