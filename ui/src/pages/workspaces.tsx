import { useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { ActionForm } from "../components/action-form.js";
import { ConfirmButton, DeleteButton } from "../components/confirm-button.js";
import { actionsColumn, DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { CloseButton, RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { RateLimitFields, rateLimitOf, rateLimitText } from "../components/rate-limit-fields.js";
import { checked, checkedValues, numberOrNull, text, textOrNull } from "../form-fields.js";
import { date, dateTime, shortId, usd } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import { listAll } from "../list-all.js";
import type {
  BudgetInterval,
  Counted,
  Data,
  Guardrail,
  ProviderSort,
  ServerTool,
  WorkspaceBudget,
  WorkspaceDetail,
} from "../types.js";
import type { PageProps } from "./page.js";

/**
 * Workspaces & budgets (management keys only; another key sees the API's refusal): the
 * organization's workspaces a page at a time (GET /workspaces), creating one (POST), editing its
 * defaults (PATCH /workspaces/{id}: only the fields of the form are sent), deleting it (DELETE,
 * confirmed first; the API refuses the default workspace and one that still has keys, and its
 * message is shown), and per workspace its budgets, one per interval (GET, PUT and DELETE
 * /workspaces/{id}/budgets/{interval}).
 */
const PAGE_SIZE = 20;
const BUDGET_INTERVALS: Array<{ value: BudgetInterval; label: string }> = [
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "monthly", label: "Monthly" },
  { value: "lifetime", label: "Lifetime" },
];
const SORTS: Array<{ value: ProviderSort | ""; label: string }> = [
  { value: "", label: "None (the gateway's routing)" },
  { value: "price", label: "Price" },
  { value: "throughput", label: "Throughput" },
  { value: "latency", label: "Latency" },
  { value: "exacto", label: "Exacto" },
];
/** The server tools a workspace can disable (proto ServerTool), by wire name. */
const SERVER_TOOLS: readonly ServerTool[] = [
  "svc:advisor",
  "svc:apply_patch",
  "svc:bash",
  "svc:datetime",
  "svc:fusion",
  "svc:image_generation",
  "svc:experimental__search_models",
  "svc:shell",
  "svc:subagent",
  "svc:tool_search",
  "svc:web_fetch",
  "svc:web_search",
];

/** The API's bound of `svc_cache_ttl_seconds` (a year); the gateway serves at most its own maximum. */
const MAX_CACHE_TTL_SECONDS = 31_536_000;

type Opened = { workspace: WorkspaceDetail; view: "edit" | "budgets" };

export function WorkspacesPage({ current }: PageProps) {
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    (signal) => api.get<Counted<WorkspaceDetail>>("/workspaces", { offset, limit: PAGE_SIZE }, signal),
    [offset],
  );
  const [opened, setOpened] = useState<Opened | undefined>();
  const action = useAction();
  // The list's copy of the opened workspace, so a rename shows in the panel's title.
  const openedWorkspace = opened
    ? (list.data?.data.find((w) => w.id === opened.workspace.id) ?? opened.workspace)
    : undefined;

  const remove = (workspace: WorkspaceDetail) =>
    action.run(async () => {
      await api.delete(`/workspaces/${workspace.id}`);
      if (opened?.workspace.id === workspace.id) setOpened(undefined);
      list.reload();
    });

  return (
    <section aria-labelledby="workspaces-heading">
      <h1 id="workspaces-heading">Workspaces &amp; budgets</h1>
      <CreateWorkspace
        onCreated={(workspace) => {
          setOffset(0);
          list.reload();
          setOpened({ workspace, view: "budgets" });
        }}
      />
      {opened && openedWorkspace ? (
        opened.view === "edit" ? (
          <EditWorkspace
            key={openedWorkspace.id}
            workspace={openedWorkspace}
            onSaved={() => {
              list.reload();
              setOpened(undefined);
            }}
            onCancel={() => setOpened(undefined)}
          />
        ) : (
          <WorkspaceBudgets key={openedWorkspace.id} workspace={openedWorkspace} onClose={() => setOpened(undefined)} />
        )
      ) : null}
      <Panel title="All workspaces" actions={<RefreshButton accessibleLabel="Refresh the workspaces" load={list} />}>
        <ErrorBanner error={list.error} context="The workspaces could not be listed" />
        <ErrorBanner error={action.error} context="The change was not made" onDismiss={action.clearError} />
        {list.loading || action.busy ? <Progress label={action.busy ? "Deleting" : "Loading workspaces"} /> : null}
        {list.data ? (
          <DataTable<WorkspaceDetail>
            caption="Workspaces of the organization"
            rows={list.data.data}
            rowKey={(w) => w.id}
            paging={{
              offset,
              pageSize: PAGE_SIZE,
              hasMore: offset + PAGE_SIZE < list.data.total_count,
              onPage: setOffset,
            }}
            empty="No workspaces."
            columns={[
              {
                header: "Name",
                cell: (w) => (
                  <>
                    {w.name}
                    {w.id === current.workspace_id ? <span class="badge">this key's</span> : null}
                  </>
                ),
              },
              { header: "Slug", cell: (w) => <code>{w.slug}</code> },
              { header: "Defaults", cell: (w) => defaultsText(w) },
              { header: "Created", cell: (w) => date(w.created_at) },
              actionsColumn((w) => (
                <>
                  <button
                    type="button"
                    aria-label={`Budgets of workspace ${w.name}`}
                    onClick={() => setOpened({ workspace: w, view: "budgets" })}
                  >
                    Budgets
                  </button>
                  <button
                    type="button"
                    aria-label={`Edit workspace ${w.name}`}
                    onClick={() => setOpened({ workspace: w, view: "edit" })}
                  >
                    Edit
                  </button>
                  <DeleteButton
                    noun="workspace"
                    name={w.name}
                    question={`Delete workspace ${w.name} with its budgets and guardrails?`}
                    disabled={action.busy}
                    onConfirm={() => remove(w)}
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

function defaultsText(w: WorkspaceDetail): string {
  const parts = [
    w.default_text_model ? `text model ${w.default_text_model}` : "",
    w.default_image_model ? `image model ${w.default_image_model}` : "",
    w.default_provider_sort ? `providers by ${w.default_provider_sort}` : "",
    w.disabled_server_tools?.length ? `${w.disabled_server_tools.length} server tool(s) disabled` : "",
    w.include_byok_in_budgets ? "BYOK counts in budgets" : "",
    w.svc_cache_ttl_seconds ? `answers cached ${w.svc_cache_ttl_seconds} s` : "",
    rateLimitText(w.svc_rate_limit) ? `at most ${rateLimitText(w.svc_rate_limit)}` : "",
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "None";
}

function CreateWorkspace({ onCreated }: { onCreated: (workspace: WorkspaceDetail) => void }) {
  const form = useRef<HTMLFormElement>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const description = textOrNull(fields, "description");
    const rateLimit = rateLimitOf(fields);
    void action.run(async () => {
      const created = await api.post<Data<WorkspaceDetail>>("/workspaces", {
        name: text(fields, "name"),
        slug: text(fields, "slug"),
        ...(description === null ? {} : { description }),
        ...(rateLimit === null ? {} : { svc_rate_limit: rateLimit }),
      });
      form.current?.reset();
      onCreated(created.data);
    });
  };
  return (
    <Panel title="Create a workspace">
      <ActionForm
        formRef={form}
        onSubmit={submit}
        submitLabel="Create workspace"
        busy={action.busy}
        error={action.error}
        failure="The workspace was not created"
        progress="Creating the workspace"
      >
        <label>
          Name
          <input name="name" required maxLength={100} autocomplete="off" />
        </label>
        <label>
          Slug (lowercase letters, digits, hyphens)
          <input name="slug" required maxLength={50} autocomplete="off" spellcheck={false} />
        </label>
        <label>
          Description (optional)
          <input name="description" maxLength={500} autocomplete="off" />
        </label>
        <RateLimitFields idPrefix="create-workspace" />
      </ActionForm>
    </Panel>
  );
}

/** The workspace's defaults; the default guardrail is chosen among the workspace's guardrails. */
function EditWorkspace({
  workspace,
  onSaved,
  onCancel,
}: {
  workspace: WorkspaceDetail;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const form = useRef<HTMLFormElement>(null);
  const action = useAction();
  const guardrails = useLoad(
    (signal) => listAll<Guardrail>("/guardrails", { workspace_id: workspace.id }, signal),
    [workspace.id],
  );
  const disabled = new Set(workspace.disabled_server_tools ?? []);
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const sort = text(fields, "default_provider_sort");
    const guardrail = text(fields, "default_guardrail_id");
    void action.run(async () => {
      // null restores a field's default; the list of tools is replaced as a whole.
      await api.patch<Data<WorkspaceDetail>>(`/workspaces/${workspace.id}`, {
        name: text(fields, "name"),
        slug: text(fields, "slug"),
        description: textOrNull(fields, "description"),
        default_text_model: textOrNull(fields, "default_text_model"),
        default_image_model: textOrNull(fields, "default_image_model"),
        default_provider_sort: sort === "" ? null : sort,
        disabled_server_tools: checkedValues(fields, "disabled_server_tools"),
        include_byok_in_budgets: checked(fields, "include_byok_in_budgets"),
        // Empty: null, which removes the workspace's TTL (its calls are cached only when they ask).
        svc_cache_ttl_seconds: numberOrNull(fields, "svc_cache_ttl_seconds"),
        // Shared by all the workspace's keys; both empty: null, no limits of the workspace's own.
        svc_rate_limit: rateLimitOf(fields),
        ...(guardrail && guardrail !== workspace.default_guardrail_id ? { default_guardrail_id: guardrail } : {}),
      });
      onSaved();
    });
  };
  const options = guardrails.data?.items ?? [];
  return (
    <Panel title={`Edit workspace ${workspace.name}`} takeFocus>
      <ActionForm
        formRef={form}
        onSubmit={submit}
        submitLabel="Save workspace"
        busy={action.busy}
        onCancel={onCancel}
        notices={<ErrorBanner error={guardrails.error} context="The guardrails could not be listed" />}
        error={action.error}
        failure="The workspace was not saved"
        progress="Saving the workspace"
      >
        <label>
          Name
          <input name="name" required maxLength={100} autocomplete="off" defaultValue={workspace.name} />
        </label>
        <label>
          Slug
          <input
            name="slug"
            required
            maxLength={50}
            autocomplete="off"
            spellcheck={false}
            defaultValue={workspace.slug}
          />
        </label>
        <label>
          Description
          <input name="description" maxLength={500} autocomplete="off" defaultValue={workspace.description ?? ""} />
        </label>
        <label>
          Default text model
          <input
            name="default_text_model"
            maxLength={256}
            autocomplete="off"
            spellcheck={false}
            placeholder="e.g. openai/gpt-4o"
            defaultValue={workspace.default_text_model ?? ""}
          />
        </label>
        <label>
          Default image model
          <input
            name="default_image_model"
            maxLength={256}
            autocomplete="off"
            spellcheck={false}
            defaultValue={workspace.default_image_model ?? ""}
          />
        </label>
        <label>
          Default provider sort
          <select name="default_provider_sort">
            {SORTS.map((s) => (
              <option value={s.value} selected={s.value === (workspace.default_provider_sort ?? "")}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Default guardrail
          <select name="default_guardrail_id" disabled={guardrails.loading}>
            {options.some((g) => g.id === workspace.default_guardrail_id) ? null : (
              <option value={workspace.default_guardrail_id} selected>
                {shortId(workspace.default_guardrail_id)} (current)
              </option>
            )}
            {options.map((g) => (
              <option value={g.id} selected={g.id === workspace.default_guardrail_id}>
                {g.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Response cache TTL (seconds; empty: not cached)
          <input
            name="svc_cache_ttl_seconds"
            type="number"
            min="1"
            max={MAX_CACHE_TTL_SECONDS}
            step="1"
            inputMode="numeric"
            aria-describedby="cache-ttl-hint"
            defaultValue={workspace.svc_cache_ttl_seconds === null ? "" : String(workspace.svc_cache_ttl_seconds)}
          />
        </label>
        <p id="cache-ttl-hint" class="hint">
          Calls of the workspace's keys that send no <code>x-gateway-cache-ttl</code> are answered from the response
          cache for this long (at most the gateway's <code>GATEWAY_CACHE_MAX_TTL_SECONDS</code>).
        </p>
        <RateLimitFields idPrefix="edit-workspace" value={workspace.svc_rate_limit} />
        <label class="check">
          <input name="include_byok_in_budgets" type="checkbox" defaultChecked={workspace.include_byok_in_budgets} />
          BYOK spend counts against budgets
        </label>
        <fieldset class="wide">
          <legend>Disabled server tools</legend>
          <div class="checks">
            {SERVER_TOOLS.map((tool) => (
              <label class="check">
                <input name="disabled_server_tools" type="checkbox" value={tool} defaultChecked={disabled.has(tool)} />
                {tool.replace(/^svc:/, "")}
              </label>
            ))}
          </div>
        </fieldset>
      </ActionForm>
    </Panel>
  );
}

/** The budgets of one workspace, at most one per interval; setting one replaces that interval's. */
function WorkspaceBudgets({ workspace, onClose }: { workspace: WorkspaceDetail; onClose: () => void }) {
  const form = useRef<HTMLFormElement>(null);
  const budgets = useLoad(
    async (signal) =>
      (await api.get<Data<WorkspaceBudget[]>>(`/workspaces/${workspace.id}/budgets`, undefined, signal)).data,
    [workspace.id],
  );
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    void action.run(async () => {
      await api.put<Data<WorkspaceBudget>>(`/workspaces/${workspace.id}/budgets/${text(fields, "interval")}`, {
        limit_usd: numberOrNull(fields, "limit_usd"),
      });
      form.current?.reset();
      budgets.reload();
    });
  };
  const remove = (budget: WorkspaceBudget) =>
    action.run(async () => {
      await api.delete(`/workspaces/${workspace.id}/budgets/${budget.reset_interval}`);
      budgets.reload();
    });
  return (
    <Panel
      title={`Budgets of workspace ${workspace.name}`}
      takeFocus
      actions={<CloseButton accessibleLabel="Close the budgets" onClose={onClose} />}
    >
      <p class="hint">
        Every call of the workspace's keys counts against its budgets; limits must shrink as the interval narrows
        (lifetime &gt; monthly &gt; weekly &gt; daily). Spend and what is left show on the Overview of a key of the
        workspace.
      </p>
      <ActionForm formRef={form} onSubmit={submit} submitLabel="Set budget" busy={action.busy}>
        <label>
          Interval
          <select name="interval">
            {BUDGET_INTERVALS.map((i) => (
              <option value={i.value}>{i.label}</option>
            ))}
          </select>
        </label>
        <label>
          Limit (USD)
          <input name="limit_usd" type="number" min="0" step="any" inputMode="decimal" required />
        </label>
      </ActionForm>
      <ErrorBanner error={budgets.error} context="The budgets could not be listed" />
      <ErrorBanner error={action.error} context="The budget was not changed" onDismiss={action.clearError} />
      {budgets.loading || action.busy ? <Progress label={action.busy ? "Saving" : "Loading budgets"} /> : null}
      {budgets.data ? (
        <DataTable<WorkspaceBudget>
          caption={`Budgets of workspace ${workspace.name}`}
          rows={budgets.data}
          rowKey={(b) => b.id}
          empty="No budgets: the workspace's spend is not limited."
          columns={[
            { header: "Interval", cell: (b) => intervalLabel(b.reset_interval) },
            { header: "Limit", kind: "number", cell: (b) => usd(b.limit_usd) },
            { header: "Last set", cell: (b) => dateTime(b.updated_at ?? b.created_at) },
            {
              header: "Actions",
              cell: (b) => (
                <ConfirmButton
                  label="Delete"
                  accessibleLabel={`Delete the ${b.reset_interval} budget of workspace ${workspace.name}`}
                  question={`Delete the ${b.reset_interval} budget?`}
                  confirmLabel={`Yes, delete the ${b.reset_interval} budget`}
                  disabled={action.busy}
                  onConfirm={() => remove(b)}
                />
              ),
            },
          ]}
        />
      ) : null}
    </Panel>
  );
}

function intervalLabel(interval: BudgetInterval): string {
  return BUDGET_INTERVALS.find((i) => i.value === interval)?.label ?? interval;
}
