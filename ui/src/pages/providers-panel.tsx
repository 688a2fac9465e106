import { api } from "../api.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { dateTime } from "../format.js";
import { useLoad } from "../hooks.js";
import type { Provider, ProviderKey } from "../types.js";

/**
 * The providers' health (GET /providers): each provider's wire format and its health as a whole;
 * to a management key, each key of a pool by position with its state (resting after a rate limit
 * until a time, or refused by the provider). Keys themselves are never shown: the API names them
 * by position only.
 */
export function ProvidersPanel() {
  const providers = useLoad(
    async (signal) => (await api.get<{ data: Provider[] }>("/providers", undefined, signal)).data,
    [],
  );
  return (
    <Panel title="Providers" actions={<RefreshButton accessibleLabel="Refresh the providers" load={providers} />}>
      <ErrorBanner error={providers.error} context="The providers could not be loaded" />
      {providers.loading ? <Progress label="Loading the providers" /> : null}
      {providers.data ? (
        <DataTable<Provider>
          caption="Providers and their keys"
          rows={providers.data}
          rowKey={(p) => p.slug}
          empty="No provider is configured."
          columns={[
            {
              header: "Provider",
              cell: (p) => (
                <>
                  {p.name}
                  <br />
                  <code>{p.slug}</code>
                </>
              ),
            },
            { header: "Kind", cell: (p) => p.svc_kind },
            {
              header: "Health",
              cell: (p) => (p.svc_keys.length === 0 ? statusText(p.svc_status) : <KeyStates keys={p.svc_keys} />),
            },
          ]}
        />
      ) : null}
      <p class="hint">
        A provider with several keys spreads its calls over them by weight. A key the provider rate limits rests until
        the time shown; a key it refuses is tried again after a wait that grows from minutes to an hour, and comes back
        once it works. The state of each key shows to management keys only.
      </p>
    </Panel>
  );
}

function KeyStates({ keys }: { keys: ProviderKey[] }) {
  return (
    <ul class="key-states">
      {keys.map((key) => (
        <li>
          {key.label} (weight {key.weight}): {stateText(key)}
        </li>
      ))}
    </ul>
  );
}

/**
 * The provider's `svc_status`, as an endpoint's `status` reads: 0 all keys take calls, -1 some are out, -2 none can
 * take a call now.
 */
function statusText(status: number): string {
  if (status === 0) return "healthy";
  return status === -1 ? "some keys are out" : "no key can take a call now";
}

function stateText(key: ProviderKey): string {
  if (key.state === "cooling") return `resting until ${dateTime(key.cooling_until)}`;
  return key.state === "refused" ? "refused by the provider" : "healthy";
}
