import type { ServiceImpl } from "@connectrpc/connect";
import {
  GenerationStatusSchema,
  type ActivityService,
  type GetActivityRequest,
} from "../../../gen/gateway/v1/activity_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { decodeCursor, encodeCursor, isCursorTime } from "../../platform/rpc/pagination.js";
import { inOrganization } from "../../platform/rpc/scope.js";
import { requestDate } from "../../platform/rpc/timestamps.js";
import type { Deps } from "../deps.js";
import { wireName } from "../../../wire/enums.js";
import { gatewayError } from "../../../wire/errors.js";
import { UUID_PATTERN } from "../../../wire/text-rules.js";
import {
  activityRows,
  findGenerationRow,
  listGenerationRows,
  type ActivityFilter,
  type LedgerScope,
} from "./activity-store.js";
import { toActivityItem, toGeneration } from "./activity-view.js";

/**
 * GET /activity, GET /generation and GET /generations over the usage ledger. Each read first waits
 * for this instance's settlement queue (read-your-writes, as GET /key and analytics do): a client
 * sees its own calls at once, other instances' within their flush interval.
 */
export function activityService(deps: Pick<Deps, "sequelize" | "engine">): ServiceImpl<typeof ActivityService> {
  return {
    async getActivity(req, ctx) {
      const filter = activityFilter(req, new Date());
      await deps.engine.settlement.barrier();
      // A management method: the organization's activity.
      const rows = await activityRows(deps.sequelize, { ...inOrganization(callerOf(ctx)), keyHash: null }, filter);
      return { data: rows.map(toActivityItem) };
    },

    async getGeneration(req, ctx) {
      const scope = ledgerScopeOf(callerOf(ctx));
      await deps.engine.settlement.barrier();
      const row = await findGenerationRow(deps.sequelize, scope, req.id);
      if (!row) throw gatewayError(404, `Generation ${req.id} not found`);
      return { data: toGeneration(row) };
    },

    async listGenerations(req, ctx) {
      const scope = ledgerScopeOf(callerOf(ctx));
      const start = req.start && requestDate(req.start, "start");
      const end = req.end && requestDate(req.end, "end");
      if (start && end && start.getTime() >= end.getTime())
        throw gatewayError(400, "start must be before end", { field: "start" });
      const after = req.cursor === undefined ? undefined : afterCursor(req.cursor);
      const limit = req.limit ?? DEFAULT_PAGE;
      await deps.engine.settlement.barrier();
      const rows = await listGenerationRows(
        deps.sequelize,
        scope,
        {
          model: req.model,
          keyHash: req.apiKeyHash,
          status: wireName(GenerationStatusSchema, req.status),
          start,
          end,
          after,
        },
        limit + 1,
      );
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const hasMore = rows.length > limit;
      return {
        data: page.map(toGeneration),
        hasMore,
        cursor: hasMore && last ? encodeCursor([last.cursor_at, last.id]) : undefined,
      };
    },
  };
}

const DEFAULT_PAGE = 20;
/** Today and the 30 days before it: OpenRouter's 30 completed days, and the day in progress. */
const ACTIVITY_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * A management key reads its organization's calls (as analytics does); any other key its own
 * only, so a generation of another key is a 404 like one that does not exist.
 */
function ledgerScopeOf(caller: Caller): LedgerScope {
  return { ...inOrganization(caller), keyHash: caller.key.isManagement ? null : caller.key.hash };
}

/** The days GET /activity covers, or the one `date` names; a 400 for a date outside them. */
function activityFilter(req: GetActivityRequest, now: Date): ActivityFilter {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const first = today - ACTIVITY_DAYS * DAY_MS;
  const byWho = { keyHash: req.apiKeyHash, memberUserId: req.userId };
  if (req.date === undefined) return { from: new Date(first), to: new Date(today + DAY_MS), ...byWho };
  // The field rule has checked the form; Date.UTC rolls over "2024-02-30", a round trip does not.
  const day = Date.parse(`${req.date}T00:00:00Z`);
  if (Number.isNaN(day) || new Date(day).toISOString().slice(0, 10) !== req.date) {
    throw gatewayError(400, `date '${req.date}' is not a calendar date (YYYY-MM-DD)`, { field: "date" });
  }
  if (day < first || day > today) {
    throw gatewayError(
      400,
      `date must be today or one of the ${ACTIVITY_DAYS} days before it (UTC): ${isoDay(first)} to ${isoDay(today)}`,
      { field: "date" },
    );
  }
  return { from: new Date(day), to: new Date(day + DAY_MS), ...byWho };
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The (time, ledger row id) of `cursor`, exactly as the list writes it. */
function afterCursor(cursor: string): [string, string] {
  const [at, id] = decodeCursor(cursor, 2, { accept: ([at, id]) => isCursorTime(at!) && UUID_PATTERN.test(id!) });
  return [at!, id!];
}
