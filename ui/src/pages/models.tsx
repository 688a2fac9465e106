import { useMemo, useState } from "preact/hooks";
import { API_BASE, api } from "../api.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Facts } from "../components/facts.js";
import { Panel } from "../components/panel.js";
import { CloseButton, RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { count, date, usd } from "../format.js";
import { useLoad } from "../hooks.js";
import type { ListedModels, Model, ModelEndpoint, ModelWithEndpoints, Percentiles } from "../types.js";
import type { PageProps } from "./page.js";
import { ProvidersPanel } from "./providers-panel.js";

/**
 * Models: the catalog (GET /models, text models by default, every modality with
 * `output_modalities=all`, embeddings included), filtered in the browser by a text box and paged,
 * with prices per million tokens and the context length; a model's details view lists its
 * endpoints (GET /models/{author}/{slug}/endpoints, the model's `links.details`) with their prices,
 * limits, and latency, throughput and uptime over the last minutes and day (null, shown "—",
 * without recent traffic). Below, the providers and the health of their keys (providers-panel.tsx).
 * Every key, management or not, may read it.
 */
const KINDS = [
  { value: "text", label: "Text models" },
  { value: "all", label: "All models (embeddings, images, audio…)" },
] as const;
type Kind = (typeof KINDS)[number]["value"];

export function ModelsPage(_props: PageProps) {
  const [kind, setKind] = useState<Kind>("text");
  const [filter, setFilter] = useState("");
  const [selected, setSelected] = useState<Model | undefined>();
  const catalog = useLoad(
    async (signal) => (await api.get<ListedModels>("/models", { output_modalities: kind }, signal)).data,
    [kind],
  );
  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
    return (catalog.data ?? []).filter((m) => {
      const haystack = `${m.id} ${m.name} ${m.description} ${m.architecture.modality}`.toLowerCase();
      return words.every((w) => haystack.includes(w));
    });
  }, [catalog.data, filter]);

  return (
    <section aria-labelledby="models-heading">
      <h1 id="models-heading">Models</h1>
      {selected ? <ModelDetails model={selected} onClose={() => setSelected(undefined)} /> : null}
      <Panel title="Catalog" actions={<RefreshButton accessibleLabel="Refresh the catalog" load={catalog} />}>
        <div class="controls">
          <label>
            Filter models
            <input
              type="search"
              value={filter}
              placeholder="name, id or modality"
              autocomplete="off"
              spellcheck={false}
              onInput={(e) => setFilter(e.currentTarget.value)}
            />
          </label>
          <label>
            Show
            <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
              {KINDS.map((k) => (
                <option value={k.value}>{k.label}</option>
              ))}
            </select>
          </label>
          <span class="hint" role="status">
            {catalog.data ? `${shown.length} of ${catalog.data.length} models` : ""}
          </span>
        </div>
        <ErrorBanner error={catalog.error} context="The catalog could not be loaded" />
        {catalog.loading ? <Progress label="Loading the catalog" /> : null}
        {catalog.data ? (
          <DataTable<Model>
            // A new filter starts again at the first page.
            key={`${kind} ${filter}`}
            caption="Models of the catalog"
            rows={shown}
            rowKey={(m) => m.id}
            empty={filter ? "No model matches the filter." : "The catalog is empty."}
            columns={[
              {
                header: "Model",
                cell: (m) => (
                  <>
                    {m.name}
                    <br />
                    <code>{m.id}</code>
                  </>
                ),
              },
              { header: "Context", kind: "number", cell: (m) => count(m.context_length) },
              { header: "Input / 1M tokens", kind: "number", cell: (m) => perMillion(m.pricing.prompt) },
              { header: "Output / 1M tokens", kind: "number", cell: (m) => perMillion(m.pricing.completion) },
              { header: "Modality", cell: (m) => m.architecture.modality },
              {
                header: "Details",
                cell: (m) => (
                  <button
                    type="button"
                    aria-label={`Details of model ${m.id}`}
                    aria-pressed={selected?.id === m.id}
                    onClick={() => setSelected(m)}
                  >
                    Details
                  </button>
                ),
              },
            ]}
          />
        ) : null}
      </Panel>
      <ProvidersPanel />
    </section>
  );
}

/** One model: what the catalog says, and the endpoints that serve it with their recent stats. */
function ModelDetails({ model, onClose }: { model: Model; onClose: () => void }) {
  const endpoints = useLoad(
    async (signal) =>
      (await api.get<{ data: ModelWithEndpoints }>(endpointsPath(model), undefined, signal)).data.endpoints,
    [model.id],
  );
  return (
    <Panel
      title={`Model ${model.id}`}
      takeFocus
      actions={<CloseButton accessibleLabel="Close the model details" onClose={onClose} />}
    >
      {model.description ? <p>{model.description}</p> : null}
      <Facts
        facts={[
          ["Name", model.name],
          ["Context", `${count(model.context_length)} tokens`],
          [
            "Max output",
            model.top_provider.max_completion_tokens === null
              ? "—"
              : `${count(model.top_provider.max_completion_tokens)} tokens`,
          ],
          ["Input / 1M tokens", perMillion(model.pricing.prompt)],
          ["Output / 1M tokens", perMillion(model.pricing.completion)],
          ["Modality", model.architecture.modality],
          ["Added", date(new Date(model.created * 1000).toISOString())],
          Boolean(model.knowledge_cutoff) && ["Knowledge cutoff", model.knowledge_cutoff],
          Boolean(model.expiration_date) && ["Withdrawn after", model.expiration_date],
        ]}
      />
      {model.supported_parameters.length ? (
        <p class="hint">
          Parameters: <code>{model.supported_parameters.join(", ")}</code>
        </p>
      ) : null}
      <ErrorBanner error={endpoints.error} context="The endpoints could not be loaded" />
      {endpoints.loading ? <Progress label="Loading the endpoints" /> : null}
      {endpoints.data ? (
        <DataTable<ModelEndpoint>
          caption={`Endpoints of ${model.id}`}
          rows={endpoints.data}
          rowKey={(e) => e.tag}
          empty="No provider serves this model."
          columns={[
            {
              header: "Provider",
              cell: (e) => (
                <>
                  {e.provider_name}
                  {e.quantization ? <span class="badge">{e.quantization}</span> : null}
                </>
              ),
            },
            { header: "Status", cell: (e) => statusText(e.status) },
            {
              header: "Context / max out",
              kind: "number",
              cell: (e) =>
                `${count(e.context_length)} / ` +
                `${e.max_completion_tokens === null ? "—" : count(e.max_completion_tokens)}`,
            },
            {
              header: "In / out per 1M",
              kind: "number",
              cell: (e) => `${perMillion(e.pricing.prompt)} / ${perMillion(e.pricing.completion)}`,
            },
            { header: "Latency p50/p90", kind: "number", cell: (e) => pair(e.latency_last_30m, "ms") },
            { header: "Tokens/s p50/p90", kind: "number", cell: (e) => pair(e.throughput_last_30m, "") },
            {
              header: "Uptime 5m/30m/1d",
              kind: "number",
              cell: (e) => [e.uptime_last_5m, e.uptime_last_30m, e.uptime_last_1d].map(percent).join(" / "),
            },
          ]}
        />
      ) : null}
      <p class="hint">
        Latency (time to the first byte, ms) and throughput (output tokens a second) of the successful calls of the last
        30 minutes; uptime, the share of calls in the last 5 minutes, 30 minutes and day that did not fail upstream.
        Without recent calls they show —.
      </p>
    </Panel>
  );
}

/** The model's `links.details` (a path under /api/v1), else its id split into author and slug. */
function endpointsPath(model: Model): string {
  const link = model.links.details;
  if (link.startsWith(`${API_BASE}/`)) return link.slice(API_BASE.length);
  const [author = "", ...slug] = model.id.split("/");
  return `/models/${encodeURIComponent(author)}/${encodeURIComponent(slug.join("/"))}/endpoints`;
}

/** A per-token price (a decimal string) per million tokens; negative means the price varies by request. */
function perMillion(price: string): string {
  const value = Number(price);
  if (!Number.isFinite(value)) return price;
  if (value < 0) return "Varies";
  return value === 0 ? "Free" : usd(value * 1e6);
}

function pair(stats: Percentiles | null, unit: string): string {
  return stats ? `${count(stats.p50)} / ${count(stats.p90)}${unit ? ` ${unit}` : ""}` : "—";
}

function percent(value: number | null): string {
  return value === null ? "—" : `${count(value)}%`;
}

function statusText(status: number): string {
  return status === 0 ? "OK" : status === -1 ? "Degraded" : status <= -2 ? "Down" : String(status);
}
