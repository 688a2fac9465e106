import { useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api.js";
import { DeleteButton } from "../components/confirm-button.js";
import { actionsColumn, DataTable } from "../components/data-table.js";
import { ActionForm } from "../components/action-form.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { useCursorPages } from "../cursor-pages.js";
import { date } from "../format.js";
import { useAction, useLoad, usePoll } from "../hooks.js";
import type { Data, Intern, InternList, InternStatus } from "../types.js";
import { InternChat } from "./intern-chat.js";
import type { PageProps } from "./page.js";

/**
 * Interns of the signed-in key's workspace (organizations in the interns programme; for the others
 * the API answers 404 and the page says so): the list, newest first (GET /interns), creating one
 * (POST /interns), provisioning and suspending (POST …/provision, …/suspend), deleting (confirmed
 * first), and a chat with a running intern (intern-chat.tsx). An intern that is booting or being
 * torn down is read again every two seconds, its boot step shown as it goes.
 */
const PAGE_SIZE = 20;
const POLL_MS = 2000;
const STATUS_TEXT: Record<InternStatus, string> = {
  queued: "Queued",
  provisioning: "Provisioning",
  running: "Running",
  failed: "Failed",
  stopped: "Suspended",
  destroying: "Deleting",
  destroy_failed: "Delete failed",
};
const CAN_PROVISION: InternStatus[] = ["queued", "stopped", "failed"];
const CAN_SUSPEND: InternStatus[] = ["running", "provisioning"];
const SETTLING: InternStatus[] = ["provisioning", "destroying"];

/** The list's answer, or the API's 404 for an organization outside the programme. */
type Listed = { kind: "list"; list: InternList } | { kind: "outside"; message: string };

export function InternsPage({ current }: PageProps) {
  const pages = useCursorPages(PAGE_SIZE);
  const interns = useLoad(
    async (signal): Promise<Listed> => {
      try {
        return {
          kind: "list",
          list: await api.get<InternList>("/interns", { limit: PAGE_SIZE, starting_after: pages.cursor }, signal),
        };
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return { kind: "outside", message: err.message };
        throw err;
      }
    },
    [pages.cursor],
  );
  const [chatWith, setChatWith] = useState<Intern | undefined>();
  const action = useAction();
  const listed = interns.data?.kind === "list" ? interns.data.list : undefined;
  usePoll(interns.reload, Boolean(listed?.data.some((i) => SETTLING.includes(i.status))), POLL_MS);

  const lifecycle = (intern: Intern, step: "provision" | "suspend") =>
    action.run(async () => {
      await api.post<Data<Intern>>(`/interns/${intern.id}/${step}`, undefined);
      if (step === "suspend" && chatWith?.id === intern.id) setChatWith(undefined);
      interns.reload();
    });
  const remove = (intern: Intern) =>
    action.run(async () => {
      await api.delete(`/interns/${intern.id}`);
      if (chatWith?.id === intern.id) setChatWith(undefined);
      interns.reload();
    });

  if (interns.data?.kind === "outside") {
    return (
      <section aria-labelledby="interns-heading">
        <h1 id="interns-heading">Interns</h1>
        <Panel title="Not in the interns programme">
          <p>
            This organization is not in the interns programme, so it has no interns (the API answers:{" "}
            <q>{interns.data.message}</q>).
          </p>
          <p class="hint">
            An operator admits an organization with{" "}
            <code>npm run admin -- entitlement grant &lt;organization&gt; interns</code>.
          </p>
        </Panel>
      </section>
    );
  }

  return (
    <section aria-labelledby="interns-heading">
      <h1 id="interns-heading">Interns</h1>
      {chatWith ? <InternChat key={chatWith.id} intern={chatWith} onClose={() => setChatWith(undefined)} /> : null}
      <CreateIntern
        workspaceId={current.workspace_id}
        onCreated={() => {
          pages.reset();
          interns.reload();
        }}
      />
      <Panel title="All interns" actions={<RefreshButton accessibleLabel="Refresh the interns" load={interns} />}>
        <ErrorBanner error={interns.error} context="The interns could not be listed" />
        <ErrorBanner error={action.error} context="The change was not made" onDismiss={action.clearError} />
        {interns.loading && !interns.data ? <Progress label="Loading interns" /> : null}
        {action.busy ? <Progress label="Saving" /> : null}
        {listed ? (
          <DataTable<Intern>
            caption="Interns of this workspace"
            rows={listed.data}
            rowKey={(i) => i.id}
            paging={pages.paging(listed.next_cursor, listed.has_more)}
            empty="No interns yet."
            columns={[
              { header: "Name", cell: (i) => i.name },
              { header: "Status", cell: (i) => <InternState intern={i} /> },
              { header: "Model", cell: (i) => i.model ?? "workspace default" },
              { header: "Created", cell: (i) => date(i.created_at) },
              actionsColumn((i) => (
                <>
                  {i.status === "running" ? (
                    <button type="button" aria-label={`Chat with ${i.name}`} onClick={() => setChatWith(i)}>
                      Chat
                    </button>
                  ) : null}
                  {CAN_PROVISION.includes(i.status) ? (
                    <button
                      type="button"
                      aria-label={`Provision ${i.name}`}
                      disabled={action.busy}
                      onClick={() => lifecycle(i, "provision")}
                    >
                      Provision
                    </button>
                  ) : null}
                  {CAN_SUSPEND.includes(i.status) ? (
                    <button
                      type="button"
                      aria-label={`Suspend ${i.name}`}
                      disabled={action.busy}
                      onClick={() => lifecycle(i, "suspend")}
                    >
                      Suspend
                    </button>
                  ) : null}
                  {i.status !== "destroying" ? (
                    <DeleteButton
                      name={i.name}
                      question={`Delete ${i.name}, its working directory and its vault?`}
                      disabled={action.busy}
                      onConfirm={() => remove(i)}
                    />
                  ) : null}
                </>
              )),
            ]}
          />
        ) : null}
      </Panel>
    </section>
  );
}

/** The status, with the boot step while provisioning and the reason of a failure. */
function InternState({ intern }: { intern: Intern }) {
  const { progress } = intern;
  return (
    <span class="intern-state">
      <span>{STATUS_TEXT[intern.status] ?? intern.status}</span>
      {progress ? (
        <span class="batch-progress">
          <progress
            max={progress.total_steps}
            value={progress.step_number}
            aria-label={`Provisioning of ${intern.name}`}
            aria-valuetext={`step ${progress.step_number} of ${progress.total_steps}`}
          />
          <span class="hint">
            {progress.step_label} ({progress.step_number}/{progress.total_steps})
          </span>
        </span>
      ) : null}
      {intern.last_failure_message ? <span class="error-text">{intern.last_failure_message}</span> : null}
    </span>
  );
}

function CreateIntern({ workspaceId, onCreated }: { workspaceId: string; onCreated: () => void }) {
  const form = useRef<HTMLFormElement>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const text = (name: string) => String(fields.get(name) ?? "").trim();
    void action.run(async () => {
      await api.post<Data<Intern>>("/interns", {
        name: text("name"),
        workspace_id: workspaceId,
        ...(text("model") ? { model: text("model") } : {}),
        ...(text("instructions") ? { instructions: text("instructions") } : {}),
        provision: fields.get("provision") === "on",
      });
      form.current?.reset();
      onCreated();
    });
  };
  return (
    <Panel title="Create an intern">
      <ActionForm
        formRef={form}
        onSubmit={submit}
        submitLabel="Create intern"
        busy={action.busy}
        error={action.error}
        failure="The intern was not created"
        progress="Creating the intern"
      >
        <label>
          Name
          <input name="name" required maxLength={100} autocomplete="off" />
        </label>
        <label>
          Model (empty for the workspace default)
          <input name="model" maxLength={256} autocomplete="off" placeholder="author/slug" />
        </label>
        <label class="wide">
          Instructions
          <textarea name="instructions" rows={2} />
        </label>
        <label class="check">
          <input name="provision" type="checkbox" defaultChecked />
          Start it now
        </label>
      </ActionForm>
    </Panel>
  );
}
