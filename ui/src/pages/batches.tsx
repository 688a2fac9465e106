import { useEffect, useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Facts } from "../components/facts.js";
import { Panel } from "../components/panel.js";
import { CloseButton, OpenButton, RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { useCursorPages } from "../cursor-pages.js";
import { count, dateTime, usd } from "../format.js";
import { useAction, useLoad, usePoll } from "../hooks.js";
import type { Batch, BatchDeletion, BatchList, BatchResult, BatchStatus } from "../types.js";
import type { PageProps } from "./page.js";

/**
 * Batches of the signed-in key's billable entity (any key): the list, newest first, 20 a page
 * (GET /batches, cursor `after`), each with its status and how many items are done; one batch
 * opened (GET /batches/{id}) with its counts, usage and, once terminal, its results; cancel
 * (POST …/cancel) and delete (DELETE, terminal batches only), both confirmed first. Whatever is
 * still running is read again every two seconds, so a batch is watched until it ends.
 */
const PAGE_SIZE = 20;
const POLL_MS = 2000;
const TERMINAL: BatchStatus[] = ["completed", "failed", "expired", "cancelled"];
const STATUS_TEXT: Record<BatchStatus, string> = {
  validating: "Validating",
  in_progress: "In progress",
  finalizing: "Finalizing",
  completed: "Completed",
  failed: "Failed",
  expired: "Expired",
  cancelling: "Cancelling",
  cancelled: "Cancelled",
};

const isTerminal = (batch: Batch) => TERMINAL.includes(batch.status);

export function BatchesPage(_props: PageProps) {
  const pages = useCursorPages(PAGE_SIZE);
  const list = useLoad(
    (signal) => api.get<BatchList>("/batches", { limit: PAGE_SIZE, after: pages.cursor }, signal),
    [pages.cursor],
  );
  const [openId, setOpenId] = useState<string | undefined>();
  usePoll(list.reload, Boolean(list.data?.data.some((b) => !isTerminal(b))), POLL_MS);

  return (
    <section aria-labelledby="batches-heading">
      <h1 id="batches-heading">Batches</h1>
      <p class="hint">
        Submit batches with <code>POST /api/v1/batches</code>; they run here in the background. Results are kept 30
        days.
      </p>
      {openId ? (
        <BatchDetail
          key={openId}
          id={openId}
          onChanged={list.reload}
          onClose={() => setOpenId(undefined)}
          onDeleted={() => {
            setOpenId(undefined);
            list.reload();
          }}
        />
      ) : null}
      <Panel title="All batches" actions={<RefreshButton accessibleLabel="Refresh the batches" load={list} />}>
        <ErrorBanner error={list.error} context="The batches could not be listed" />
        {list.loading && !list.data ? <Progress label="Loading batches" /> : null}
        {list.data ? (
          <DataTable<Batch>
            caption="Batches, newest first"
            rows={list.data.data}
            rowKey={(b) => b.id}
            paging={pages.paging(list.data.last_id, list.data.has_more)}
            empty="No batches yet."
            columns={[
              { header: "Batch", cell: (b) => <code>{b.id}</code> },
              { header: "Status", cell: (b) => STATUS_TEXT[b.status] ?? b.status },
              { header: "Progress", cell: (b) => <BatchProgress batch={b} /> },
              { header: "Model", cell: (b) => b.model },
              { header: "Endpoint", cell: (b) => <code>{b.endpoint}</code> },
              { header: "Created", cell: (b) => unixTime(b.created_at) },
              {
                header: "Actions",
                cell: (b) => (
                  <OpenButton
                    label="Open"
                    accessibleLabel={`Open batch ${b.id}`}
                    open={openId === b.id}
                    onOpen={() => setOpenId(b.id)}
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

/** Items done of all: a bar while the batch runs, and the numbers in words. */
function BatchProgress({ batch }: { batch: Batch }) {
  const { completed, failed, total } = batch.request_counts;
  const done = completed + failed;
  const text = `${count(done)} of ${count(total)} done${failed > 0 ? `, ${count(failed)} failed` : ""}`;
  return (
    <span class="batch-progress">
      {isTerminal(batch) ? null : (
        <progress
          max={Math.max(total, 1)}
          value={done}
          aria-label={`Progress of batch ${batch.id}`}
          aria-valuetext={text}
        />
      )}
      <span>{text}</span>
    </span>
  );
}

function BatchDetail({
  id,
  onChanged,
  onClose,
  onDeleted,
}: {
  id: string;
  onChanged: () => void;
  onClose: () => void;
  onDeleted: () => void;
}) {
  const batch = useLoad((signal) => api.get<Batch>(`/batches/${encodeURIComponent(id)}`, undefined, signal), [id]);
  const action = useAction();
  const running = batch.data !== undefined && !isTerminal(batch.data);
  usePoll(batch.reload, running && !batch.error, POLL_MS);

  // The list shows the status too: read it again when the open batch moves on.
  const status = batch.data?.status;
  useEffect(() => {
    if (status) onChanged();
  }, [status]);

  const cancel = () =>
    action.run(async () => {
      await api.post<Batch>(`/batches/${encodeURIComponent(id)}/cancel`, undefined);
      batch.reload();
    });
  const remove = () =>
    action.run(async () => {
      await api.delete<BatchDeletion>(`/batches/${encodeURIComponent(id)}`);
      onDeleted();
    });

  const shown = batch.data;
  return (
    <Panel
      title={`Batch ${id}`}
      takeFocus
      actions={<CloseButton accessibleLabel={`Close batch ${id}`} onClose={onClose} />}
    >
      <ErrorBanner error={batch.error} context="The batch could not be read" />
      <ErrorBanner error={action.error} context="The change was not made" onDismiss={action.clearError} />
      {batch.loading && !shown ? <Progress label="Loading the batch" /> : null}
      {action.busy ? <Progress label="Saving" /> : null}
      {shown ? (
        <>
          <Facts
            facts={[
              [
                "Status",
                <span role="status" aria-label="Batch status">
                  {STATUS_TEXT[shown.status] ?? shown.status}
                </span>,
              ],
              ["Items", <BatchProgress batch={shown} />],
              ["Completed", count(shown.request_counts.completed)],
              ["Failed", count(shown.request_counts.failed)],
              ["Model", shown.model],
              ["Endpoint", <code>{shown.endpoint}</code>],
              ["Created", unixTime(shown.created_at)],
              ["Finished", shown.finalized_at === null ? "—" : unixTime(shown.finalized_at)],
              ["Cost", usd(shown.usage.cost)],
              ["Tokens", `${count(shown.usage.prompt_tokens)} in, ${count(shown.usage.completion_tokens)} out`],
            ]}
          />
          {shown.error ? <p class="error-text">Failed: {shown.error.message}</p> : null}
          {running ? <p class="hint">Refreshed every {POLL_MS / 1000} seconds while it runs.</p> : null}
          <div class="form-actions spaced">
            {running && shown.status !== "cancelling" ? (
              <ConfirmButton
                label="Cancel batch"
                accessibleLabel={`Cancel batch ${id}`}
                question="Cancel this batch? Items not yet run will not run."
                confirmLabel="Yes, cancel the batch"
                disabled={action.busy}
                onConfirm={cancel}
              />
            ) : null}
            {isTerminal(shown) ? (
              <ConfirmButton
                label="Delete batch"
                accessibleLabel={`Delete batch ${id}`}
                question="Delete this batch and its results? Its usage stays in the ledger."
                confirmLabel="Yes, delete the batch"
                disabled={action.busy}
                onConfirm={remove}
              />
            ) : null}
          </div>
          {shown.results ? (
            <DataTable<BatchResult>
              caption={`Results of batch ${id}`}
              rows={shown.results}
              rowKey={(r) => r.id}
              empty="No results."
              columns={[
                { header: "Custom id", cell: (r) => <code>{r.custom_id}</code> },
                {
                  header: "Outcome",
                  cell: (r) =>
                    r.response ? `${r.response.status_code} OK` : `Error: ${r.error?.message ?? "unknown"}`,
                },
                { header: "Answer", cell: (r) => <ResultAnswer result={r} /> },
              ]}
            />
          ) : running ? (
            <p class="hint">Results are shown once the batch has ended.</p>
          ) : null}
        </>
      ) : null}
    </Panel>
  );
}

/** What an item answered, in short (its text, or how many vectors), with the whole body on demand. */
function ResultAnswer({ result }: { result: BatchResult }) {
  if (!result.response) return <span class="hint">{result.error?.error_type || result.error?.type || "—"}</span>;
  return (
    <details>
      <summary>{answerText(result.response.body ?? {})}</summary>
      <pre class="json">{JSON.stringify(result.response.body, null, 2)}</pre>
    </details>
  );
}

/** The text of a chat completion, a response or a message; the vector count of embeddings. */
function answerText(body: Record<string, unknown>): string {
  const texts: string[] = [];
  const visit = (value: unknown, key: string): void => {
    if (typeof value === "string" && (key === "content" || key === "text" || key === "output_text")) texts.push(value);
    else if (Array.isArray(value)) value.forEach((item) => visit(item, key));
    else if (typeof value === "object" && value !== null)
      for (const [name, inner] of Object.entries(value)) visit(inner, name);
  };
  if (body.object === "list" && Array.isArray(body.data))
    return `${body.data.length} embedding${body.data.length === 1 ? "" : "s"}`;
  visit(body.choices ?? body.output ?? body.content, "");
  const text = texts.join(" ").trim();
  return text ? (text.length > 120 ? `${text.slice(0, 120)}…` : text) : "Answer";
}

function unixTime(seconds: number): string {
  return dateTime(new Date(seconds * 1000).toISOString());
}
