import type { ServiceImpl } from "@connectrpc/connect";
import type { AnalyticsService } from "../../gen/gateway/v1/analytics_pb.js";
import { analyticsMeta } from "./catalog.js";

/** GET /analytics/meta. The query itself (QueryAnalytics) comes with the usage ledger. */
export function analyticsService(): Partial<ServiceImpl<typeof AnalyticsService>> {
  return {
    getAnalyticsMeta() {
      return { data: analyticsMeta() };
    },
  };
}
