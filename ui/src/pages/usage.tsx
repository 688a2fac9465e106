import { useMemo, useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Facts, type Fact } from "../components/facts.js";
import { Panel } from "../components/panel.js";
import { CloseButton, OpenButton, RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { useCursorPages } from "../cursor-pages.js";
import { count, shortId, usd } from "../format.js";
import { useLoad } from "../hooks.js";
import { listAll } from "../list-all.js";
import type { ApiKey, Data, Generation, GenerationList, GenerationStatus } from "../types.js";
import type { PageProps } from "./page.js";

/**
 * The usage log: recent calls from the ledger (GET /generations), newest first, 20 a page, with
 * filters for the model, the key (a management key picks among the organization's keys; any other
 * key sees its own calls only), how the call ended and a time range (UTC); one call's details
 * with every provider attempt (GET /generation?id=).
 */
const PAGE_SIZE = 20;
const STATUSES: Array<{ value: GenerationStatus | ""; label: string }> = [
  { value: "", label: "Any" },
  { value: "success", label: "Success" },
  { value: "error", label: "Error" },
  { value: "cancelled", label: "Cancelled" },
];

interface Filters {
  model?: string;
  api_key_hash?: string;
  status?: GenerationStatus;
  start?: string;
  end?: string;
}

export function UsagePage({ current }: PageProps) {
  const [filters, setFilters] = useState<Filters>({});
  const [filterError, setFilterError] = useState<string | undefined>();
  const [openId, setOpenId] = useState<string | undefined>();
  const pages = useCursorPages(PAGE_SIZE);
  const calls = useLoad(
    (signal) => api.get<GenerationList>("/generations", { limit: PAGE_SIZE, cursor: pages.cursor, ...filters }, signal),
    [pages.cursor, JSON.stringify(filters)],
  );
  // Names for the key filter and column; only a management key may list the keys.
  const keys = useLoad(
    async (signal) =>
      current.is_management_key ? (await listAll<ApiKey>("/keys", { include_disabled: true }, signal)).items : [],
    [],
  );
  const models = useLoad(
    async (signal) => (await api.get<Data<Array<{ id: string }>>>("/models", undefined, signal)).data.map((m) => m.id),
    [],
  );
  const keyName = useMemo(() => {
    const names = new Map((keys.data ?? []).map((k) => [k.hash, k.name]));
    return (hash: string) => names.get(hash) ?? shortId(hash);
  }, [keys.data]);

  const form = useRef<HTMLFormElement>(null);
  const apply = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const text = (name: string) => String(fields.get(name) ?? "").trim() || undefined;
    try {
      const start = utcTime(text("start"), "From");
      const end = utcTime(text("end"), "To");
      if (start && end && start >= end) throw new Error("“From” must be before “To”.");
      setFilters({
        model: text("model"),
        api_key_hash: text("api_key_hash"),
        status: text("status") as GenerationStatus | undefined,
        start,
        end,
      });
      setFilterError(undefined);
      pages.reset();
    } catch (err) {
      setFilterError(err instanceof Error ? err.message : String(err));
    }
  };
  const clear = () => {
    form.current?.reset();
    setFilters({});
    setFilterError(undefined);
    pages.reset();
  };

  return (
    <section aria-labelledby="usage-heading">
      <h1 id="usage-heading">Usage log</h1>
      {openId ? (
        <GenerationDetail key={openId} id={openId} keyName={keyName} onClose={() => setOpenId(undefined)} />
      ) : null}
      <Panel title="Filters">
        <form ref={form} class="form-grid" onSubmit={apply} aria-label="Filters of the usage log">
          <label>
            Model
            <input name="model" list="usage-models" autocomplete="off" placeholder="any model" />
            <datalist id="usage-models">
              {(models.data ?? []).map((id) => (
                <option value={id} />
              ))}
            </datalist>
          </label>
          <label>
            Key
            <select name="api_key_hash" disabled={!current.is_management_key}>
              <option value="">{current.is_management_key ? "Any key" : "This key"}</option>
              {(keys.data ?? []).map((k) => (
                <option value={k.hash}>{k.name}</option>
              ))}
            </select>
          </label>
          <label>
            Status
            <select name="status">
              {STATUSES.map((s) => (
                <option value={s.value}>{s.label}</option>
              ))}
            </select>
          </label>
          <label>
            From (UTC)
            <input name="start" type="datetime-local" step="1" />
          </label>
          <label>
            To (UTC)
            <input name="end" type="datetime-local" step="1" />
          </label>
          <div class="form-actions">
            <button type="submit">Apply filters</button>
            <button type="button" onClick={clear}>
              Clear filters
            </button>
          </div>
        </form>
        {current.is_management_key ? null : <p class="hint">This key sees its own calls only.</p>}
        <ErrorBanner error={filterError} context="The filters were not applied" />
        <ErrorBanner error={keys.error} context="The keys could not be listed" />
      </Panel>
      <Panel title="Recent calls" actions={<RefreshButton accessibleLabel="Refresh the usage log" load={calls} />}>
        <ErrorBanner error={calls.error} context="The usage log could not be read" />
        {calls.loading ? <Progress label="Loading calls" /> : null}
        {calls.data && !calls.error ? (
          <DataTable<Generation>
            caption="Calls, newest first"
            rows={calls.data.data}
            rowKey={(g) => g.id}
            paging={pages.paging(calls.data.cursor, calls.data.has_more)}
            empty="No calls match."
            columns={[
              { header: "Time", cell: (g) => utcSeconds(g.created_at) },
              { header: "Model", cell: (g) => g.model },
              { header: "Provider", cell: (g) => g.provider_name ?? "—" },
              { header: "Key", cell: (g) => <span title={g.api_key_hash}>{keyName(g.api_key_hash)}</span> },
              { header: "Status", cell: (g) => statusText(g) },
              {
                header: "Tokens",
                kind: "number",
                cell: (g) => `${count(g.tokens_prompt)} → ${count(g.tokens_completion)}`,
              },
              {
                header: "Cost",
                kind: "number",
                cell: (g) =>
                  g.svc_cache_hit ? (
                    <span
                      title={`Answered from the response cache; the original call cost ${usd(g.svc_cache_savings)}`}
                    >
                      {usd(g.total_cost)} <span class="badge">cache hit</span>
                    </span>
                  ) : (
                    usd(g.total_cost)
                  ),
              },
              { header: "Latency", kind: "number", cell: (g) => milliseconds(g.latency) },
              {
                header: "Details",
                cell: (g) => (
                  <OpenButton
                    label="Details"
                    accessibleLabel={`Details of ${g.id}`}
                    open={openId === g.id}
                    onOpen={() => setOpenId(g.id)}
                  />
                ),
              },
            ]}
          />
        ) : null}
      </Panel>
    </section>
  );
}

function GenerationDetail({
  id,
  keyName,
  onClose,
}: {
  id: string;
  keyName: (hash: string) => string;
  onClose: () => void;
}) {
  const generation = useLoad(
    async (signal) => (await api.get<Data<Generation>>("/generation", { id }, signal)).data,
    [id],
  );
  const g = generation.data;
  const facts: Fact[] = g
    ? [
        ["Status", statusText(g)],
        ["Time", utcSeconds(g.created_at)],
        ["Model", g.model],
        ["Provider", g.provider_name ?? "—"],
        ["API", `${g.api_type}${g.streamed ? ", streamed" : ""}`],
        ["Key", keyName(g.api_key_hash)],
        ["Prompt tokens", count(g.tokens_prompt)],
        ["Completion tokens", count(g.tokens_completion)],
        ["Reasoning tokens", count(g.native_tokens_reasoning)],
        ["Cached tokens", count(g.native_tokens_cached)],
        ["Cost", usd(g.total_cost)],
        ["Paid", usd(g.usage)],
        ["On own provider key", g.upstream_inference_cost === null ? "—" : usd(g.upstream_inference_cost)],
        ["Latency", milliseconds(g.latency)],
        ["Generation time", milliseconds(g.generation_time)],
        ["Region", g.data_region ?? "—"],
        ["End user", g.external_user ?? "—"],
      ]
    : [];
  return (
    <Panel
      title={`Generation ${id}`}
      takeFocus
      actions={<CloseButton accessibleLabel={`Close generation ${id}`} onClose={onClose} />}
    >
      <ErrorBanner error={generation.error} context="The call could not be read" />
      {generation.loading ? <Progress label="Loading the call" /> : null}
      {g ? (
        <>
          <Facts facts={facts} />
          <DataTable<Generation["provider_responses"][number]>
            caption={`Provider attempts of ${id}`}
            rows={g.provider_responses}
            rowKey={(a) => String(g.provider_responses.indexOf(a))}
            empty="No provider was reached."
            columns={[
              { header: "Attempt", kind: "number", cell: (a) => String(g.provider_responses.indexOf(a) + 1) },
              { header: "Endpoint", cell: (a) => (a.endpoint_id ? <code>{a.endpoint_id}</code> : "—") },
              { header: "Provider", cell: (a) => a.provider_name ?? "—" },
              { header: "HTTP status", kind: "number", cell: (a) => String(a.status) },
              { header: "Latency", kind: "number", cell: (a) => milliseconds(a.latency) },
              { header: "Own key", cell: (a) => (a.is_byok ? "yes" : "no") },
            ]}
          />
        </>
      ) : null}
    </Panel>
  );
}

function statusText(g: Generation): string {
  const label = STATUSES.find((s) => s.value === g.status)?.label ?? g.status;
  return g.status === "success" ? label : `${label} (${g.http_status})`;
}

function milliseconds(value: number | null): string {
  return value === null ? "—" : `${count(Math.round(value))} ms`;
}

/** A call's time to the second, in UTC: calls seconds apart must read apart. */
function utcSeconds(iso: string): string {
  const value = new Date(iso);
  return Number.isNaN(value.getTime()) ? iso : `${value.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A `datetime-local` value read as UTC (the log's times are UTC), as ISO 8601; throws naming the field. */
function utcTime(value: string | undefined, field: string): string | undefined {
  if (!value) return undefined;
  const time = new Date(`${value.length === 16 ? `${value}:00` : value}Z`);
  if (Number.isNaN(time.getTime())) throw new Error(`“${field}” is not a time.`);
  return time.toISOString();
}
