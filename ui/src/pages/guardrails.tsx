import { useState } from "preact/hooks";
import { api } from "../api.js";
import { DeleteButton } from "../components/confirm-button.js";
import { actionsColumn, DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { date, usd } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import { listAll } from "../list-all.js";
import type { Counted, Data, Guardrail, WorkspaceDetail } from "../types.js";
import { GuardrailAssignments } from "./guardrail-assignments.js";
import { GuardrailForm } from "./guardrail-form.js";
import type { PageProps } from "./page.js";

/**
 * Guardrails (management keys only): the guardrails of one workspace a page at a time (GET
 * /guardrails?workspace_id=), creating one there (POST), editing (PATCH /guardrails/{id}),
 * deleting (DELETE, confirmed first: the API answers 409 for a workspace's default guardrail and
 * the page shows its message), and assigning it to keys and members (guardrail-assignments.tsx).
 */
const PAGE_SIZE = 20;

type Opened = { guardrail: Guardrail; view: "edit" | "assignments" };

export function GuardrailsPage({ current }: PageProps) {
  const workspaces = useLoad((signal) => listAll<WorkspaceDetail>("/workspaces", {}, signal), []);
  const [workspaceId, setWorkspaceId] = useState(current.workspace_id);
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    (signal) =>
      api.get<Counted<Guardrail>>("/guardrails", { workspace_id: workspaceId, offset, limit: PAGE_SIZE }, signal),
    [workspaceId, offset],
  );
  const [creating, setCreating] = useState(false);
  const [opened, setOpened] = useState<Opened | undefined>();
  const action = useAction();
  const workspace = workspaces.data?.items.find((w) => w.id === workspaceId);
  const where = workspace ? `workspace ${workspace.name}` : "this key's workspace";
  const openedGuardrail = opened
    ? (list.data?.data.find((g) => g.id === opened.guardrail.id) ?? opened.guardrail)
    : undefined;

  const chooseWorkspace = (id: string) => {
    setWorkspaceId(id);
    setOffset(0);
    setOpened(undefined);
  };
  const remove = (guardrail: Guardrail) =>
    action.run(async () => {
      await api.delete(`/guardrails/${guardrail.id}`);
      if (opened?.guardrail.id === guardrail.id) setOpened(undefined);
      list.reload();
    });

  return (
    <section aria-labelledby="guardrails-heading">
      <h1 id="guardrails-heading">Guardrails</h1>
      <div class="controls panel">
        <label>
          Workspace
          <select
            value={workspaceId}
            disabled={!workspaces.data}
            onChange={(e) => chooseWorkspace(e.currentTarget.value)}
          >
            {workspace ? null : <option value={workspaceId}>This key's workspace</option>}
            {(workspaces.data?.items ?? []).map((w) => (
              <option value={w.id}>{w.name}</option>
            ))}
          </select>
        </label>
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {creating ? "Close the new guardrail" : "New guardrail"}
        </button>
      </div>
      <ErrorBanner error={workspaces.error} context="The workspaces could not be listed" />
      {creating ? (
        <Panel title={`Create a guardrail in ${where}`} takeFocus>
          <GuardrailForm
            submitLabel="Create guardrail"
            failure="The guardrail was not created"
            onSubmit={async (body) => {
              await api.post<Data<Guardrail>>("/guardrails", { ...body, workspace_id: workspaceId });
              setCreating(false);
              setOffset(0);
              list.reload();
            }}
            onCancel={() => setCreating(false)}
          />
        </Panel>
      ) : null}
      {opened && openedGuardrail ? (
        opened.view === "edit" ? (
          <Panel title={`Edit guardrail ${openedGuardrail.name}`} takeFocus>
            <GuardrailForm
              key={openedGuardrail.id}
              initial={openedGuardrail}
              submitLabel="Save guardrail"
              failure="The guardrail was not saved"
              onSubmit={async (body) => {
                await api.patch<Data<Guardrail>>(`/guardrails/${openedGuardrail.id}`, body);
                setOpened(undefined);
                list.reload();
              }}
              onCancel={() => setOpened(undefined)}
            />
          </Panel>
        ) : (
          <GuardrailAssignments
            key={openedGuardrail.id}
            guardrail={openedGuardrail}
            onClose={() => setOpened(undefined)}
          />
        )
      ) : null}
      <Panel
        title={`Guardrails of ${where}`}
        actions={<RefreshButton accessibleLabel="Refresh the guardrails" load={list} />}
      >
        <ErrorBanner error={list.error} context="The guardrails could not be listed" />
        <ErrorBanner error={action.error} context="The change was not made" onDismiss={action.clearError} />
        {list.loading || action.busy ? <Progress label={action.busy ? "Deleting" : "Loading guardrails"} /> : null}
        {list.data ? (
          <DataTable<Guardrail>
            caption={`Guardrails of ${where}`}
            rows={list.data.data}
            rowKey={(g) => g.id}
            paging={{
              offset,
              pageSize: PAGE_SIZE,
              hasMore: offset + PAGE_SIZE < list.data.total_count,
              onPage: setOffset,
            }}
            empty="No guardrails in this workspace."
            columns={[
              {
                header: "Name",
                cell: (g) => (
                  <>
                    {g.name}
                    {g.id === workspace?.default_guardrail_id ? <span class="badge">workspace default</span> : null}
                  </>
                ),
              },
              { header: "Budget", cell: (g) => budgetText(g) },
              { header: "Models", cell: (g) => allowText(g.allowed_models, g.ignored_models) },
              { header: "Providers", cell: (g) => allowText(g.allowed_providers, g.ignored_providers) },
              { header: "Data", cell: (g) => dataText(g) },
              { header: "Created", cell: (g) => date(g.created_at) },
              actionsColumn((g) => (
                <>
                  <button
                    type="button"
                    aria-label={`Assignments of guardrail ${g.name}`}
                    onClick={() => setOpened({ guardrail: g, view: "assignments" })}
                  >
                    Assign
                  </button>
                  <button
                    type="button"
                    aria-label={`Edit guardrail ${g.name}`}
                    onClick={() => setOpened({ guardrail: g, view: "edit" })}
                  >
                    Edit
                  </button>
                  <DeleteButton
                    noun="guardrail"
                    name={g.name}
                    question={`Delete guardrail ${g.name} and its assignments?`}
                    disabled={action.busy}
                    onConfirm={() => remove(g)}
                  />
                </>
              )),
            ]}
          />
        ) : null}
      </Panel>
    </section>
  );
}

function budgetText(g: Guardrail): string {
  if (g.limit_usd === null) return "None";
  return (
    `${usd(g.limit_usd)} ${g.reset_interval ?? "once (lifetime)"} per key or member` +
    `${g.include_byok_in_budgets ? ", BYOK included" : ""}`
  );
}

function allowText(allowed: string[] | null, ignored: string[] | null): string {
  const parts = [
    allowed?.length ? `only ${allowed.join(", ")}` : "all",
    ignored?.length ? `except ${ignored.join(", ")}` : "",
  ];
  return parts.filter(Boolean).join(" ");
}

function dataText(g: Guardrail): string {
  const parts = [
    g.allowed_data_regions?.length ? `regions ${g.allowed_data_regions.join(", ")}` : "",
    g.enforce_zdr === true ? "zero data retention" : "",
    g.enable_paid_model_training ? "" : "no paid training",
    g.enable_free_model_training ? "" : "no free training",
    g.enable_free_model_publication ? "" : "no free publication",
    g.content_filter_builtins.length ? `${g.content_filter_builtins.length} content filter(s)` : "",
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "No restriction";
}
