import { useMemo, useState } from "preact/hooks";
import { api } from "../api.js";
import { Chart } from "../components/chart.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Facts } from "../components/facts.js";
import { Panel } from "../components/panel.js";
import { RefreshButton } from "../components/panel-buttons.js";
import { Progress, Remaining } from "../components/progress.js";
import { count, dateTime, shortId, usd } from "../format.js";
import { useLoad } from "../hooks.js";
import type { AnalyticsRow, ApiKey, Budget, CurrentKey, Data, Workspace } from "../types.js";
import type { PageProps } from "./page.js";
import { buildSeries, PERIODS, periodBuckets, type Granularity, type GroupSeries } from "./overview-series.js";

/**
 * Overview: spend and requests over time from POST /analytics/query (a management key's view:
 * another key sees the API's refusal in place of the charts), grouped by a dimension, and the
 * budgets of the signed-in key with what is left (GET /key, which every key may read).
 */
const DIMENSIONS = [
  { name: "model", label: "Model", phrase: "model" },
  { name: "provider", label: "Provider", phrase: "provider" },
  { name: "api_key", label: "API key", phrase: "API key" },
  { name: "workspace", label: "Workspace", phrase: "workspace" },
] as const;
type Dimension = (typeof DIMENSIONS)[number]["name"];

export function OverviewPage({ current }: PageProps) {
  const [granularity, setGranularity] = useState<Granularity>("day");
  const [dimension, setDimension] = useState<Dimension>("model");
  const usage = useLoad(
    async (signal) => {
      const buckets = periodBuckets(granularity, new Date());
      const [{ data: rows }, labelOf] = await Promise.all([
        api.post<Data<AnalyticsRow[]>>("/analytics/query", {
          metrics: ["cost_usd", "requests", "cache_savings_usd"],
          dimensions: [dimension],
          granularity,
          start: buckets[0]!.toISOString(),
          limit: 10000,
        }),
        groupLabels(dimension, signal),
      ]);
      // What was asked travels with the answer: the controls may have moved on while it loaded.
      return {
        ...buildSeries(rows, dimension, buckets, labelOf),
        granularity,
        dimension: DIMENSIONS.find((d) => d.name === dimension)!,
      };
    },
    [granularity, dimension],
  );
  const key = useLoad(async (signal) => (await api.get<Data<CurrentKey>>("/key", undefined, signal)).data, []);

  const charts = useMemo(() => {
    const shown = usage.data;
    if (!shown) return undefined;
    const by = shown.dimension.phrase;
    return {
      ...shown,
      cost: { title: `Spend (USD) by ${by}`, series: shown.groups.map((g) => ({ label: g.label, values: g.cost })) },
      requests: {
        title: `Requests by ${by}`,
        series: shown.groups.map((g) => ({ label: g.label, values: g.requests })),
      },
      caption: `Totals by ${by}, ${PERIODS[shown.granularity].span}`,
      bucketLabel: PERIODS[shown.granularity].bucketLabel,
    };
  }, [usage.data]);

  return (
    <section aria-labelledby="overview-heading">
      <h1 id="overview-heading">Overview</h1>
      <Panel title="Spend and requests over time">
        <div class="controls">
          <label>
            Period
            <select value={granularity} onChange={(e) => setGranularity(e.currentTarget.value as Granularity)}>
              {(Object.keys(PERIODS) as Granularity[]).map((g) => (
                <option value={g}>{PERIODS[g].label}</option>
              ))}
            </select>
          </label>
          <label>
            Group by
            <select value={dimension} onChange={(e) => setDimension(e.currentTarget.value as Dimension)}>
              {DIMENSIONS.map((d) => (
                <option value={d.name}>{d.label}</option>
              ))}
            </select>
          </label>
          <RefreshButton accessibleLabel="Refresh spend and requests" load={usage} />
        </div>
        <p class="hint">
          Over {PERIODS[granularity].span}, in UTC.
          {current.is_management_key ? "" : " Analytics cover the whole organization and need a management key."}
        </p>
        <ErrorBanner error={usage.error} context="Spend over time is not available" />
        {usage.loading ? <Progress label="Loading spend and requests" /> : null}
        {charts && !usage.error ? (
          <>
            {charts.all.length > 0 ? (
              <div class="charts">
                <Chart
                  title={charts.cost.title}
                  x={charts.x}
                  series={charts.cost.series}
                  format={usd}
                  formatX={charts.bucketLabel}
                />
                <Chart
                  title={charts.requests.title}
                  x={charts.x}
                  series={charts.requests.series}
                  format={count}
                  formatX={charts.bucketLabel}
                  integer
                />
              </div>
            ) : null}
            <DataTable<GroupSeries>
              caption={charts.caption}
              rows={charts.all}
              rowKey={(g) => g.group}
              pageSize={10}
              empty="No calls in this period."
              columns={[
                { header: charts.dimension.label, cell: (g) => <span title={g.group}>{g.label}</span> },
                { header: "Requests", kind: "number", cell: (g) => count(g.totalRequests) },
                { header: "Spend", kind: "number", cell: (g) => usd(g.totalCost) },
                { header: "Saved by the cache", kind: "number", cell: (g) => usd(g.totalSaved) },
              ]}
            />
          </>
        ) : null}
      </Panel>
      <Panel title="Budgets of this key">
        <ErrorBanner error={key.error} context="The key's budgets are not available" />
        {key.loading && !key.data ? <Progress label="Loading budgets" /> : null}
        {key.data ? <Budgets current={key.data} /> : null}
      </Panel>
    </section>
  );
}

function Budgets({ current }: { current: CurrentKey }) {
  const effective = current.effective_budget;
  return (
    <>
      <Facts
        facts={[
          ["Spent today", usd(current.usage_daily)],
          ["This week", usd(current.usage_weekly)],
          ["This month", usd(current.usage_monthly)],
          [
            "Credit limit",
            current.limit === null
              ? "None"
              : `${usd(current.limit_remaining)} left of ${usd(current.limit)}` +
                `${current.limit_reset ? `, resets ${current.limit_reset}` : ""}`,
          ],
        ]}
      />
      <p>
        {effective
          ? `Binding now: the ${scopeName(effective)} — ` +
            `${usd(effective.remaining_usd)} left of ${usd(effective.limit_usd)}.`
          : "No budget applies to this key."}
      </p>
      <DataTable<Budget>
        caption="Budgets that apply to this key"
        rows={current.budgets}
        rowKey={(b) => `${b.scope}:${b.budget_id ?? ""}:${b.guardrail_id ?? ""}:${b.reset_interval ?? ""}`}
        empty="No budgets."
        columns={[
          { header: "Budget", cell: (b) => scopeName(b) },
          { header: "Interval", cell: (b) => b.reset_interval ?? "never resets" },
          { header: "Limit", kind: "number", cell: (b) => usd(b.limit_usd) },
          { header: "Spent", kind: "number", cell: (b) => usd(b.spend_usd) },
          {
            header: "Left",
            kind: "number",
            cell: (b) => (
              <span class="left">
                <Remaining
                  remaining={b.remaining_usd}
                  limit={b.limit_usd}
                  label={`Left of the ${scopeName(b)}`}
                  text={`${usd(b.remaining_usd)} of ${usd(b.limit_usd)}`}
                />
                {usd(b.remaining_usd)}
              </span>
            ),
          },
          { header: "Resets", cell: (b) => dateTime(b.resets_at) },
        ]}
      />
    </>
  );
}

function scopeName(budget: Budget): string {
  const interval = budget.reset_interval && budget.reset_interval !== "lifetime" ? `${budget.reset_interval} ` : "";
  if (budget.scope === "key") return `key's ${interval}credit limit`;
  if (budget.scope === "workspace") return `workspace's ${interval}budget`;
  return `guardrail's ${interval}budget${budget.guardrail_id ? ` (${shortId(budget.guardrail_id)})` : ""}`;
}

/**
 * Names for the values of a dimension: keys and workspaces are identified by hash and UUID in the
 * ledger, and shown by name when the key may list them (the first 100 of each); otherwise shortened.
 */
async function groupLabels(dimension: Dimension, signal: AbortSignal): Promise<(group: string) => string> {
  const names = new Map<string, string>();
  try {
    if (dimension === "api_key") {
      const { data } = await api.get<Data<ApiKey[]>>("/keys", { limit: 100, include_disabled: true }, signal);
      for (const key of data) names.set(key.hash, key.name);
    } else if (dimension === "workspace") {
      const { data } = await api.get<Data<Workspace[]>>("/workspaces", { limit: 100 }, signal);
      for (const workspace of data) names.set(workspace.id, workspace.name);
    }
  } catch {
    // Names are a nicety: without them the shortened identifiers are shown.
  }
  return (group) => names.get(group) ?? (dimension === "api_key" || dimension === "workspace" ? shortId(group) : group);
}
