import { useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { DeleteButton } from "../components/confirm-button.js";
import { CopyButton } from "../components/copy-button.js";
import { actionsColumn, DataTable } from "../components/data-table.js";
import { ActionForm } from "../components/action-form.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { RefreshButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { RateLimitFields, rateLimitOf, rateLimitText } from "../components/rate-limit-fields.js";
import { date, usd } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import type { ApiKey, CreatedKey, Data, ResetInterval } from "../types.js";
import type { PageProps } from "./page.js";

/**
 * Keys (management keys only; another key sees the API's refusal): the organization's keys a page
 * at a time (GET /keys, disabled ones too), creating one (POST /keys: its secret is shown once,
 * held in this page's memory only until dismissed), enabling and disabling, the credit limit and
 * its reset interval and the requests and tokens per minute (PATCH /keys/{hash}), and deleting
 * (DELETE /keys/{hash}, confirmed first).
 */
const PAGE_SIZE = 20;
const INTERVALS: Array<{ value: ResetInterval | ""; label: string }> = [
  { value: "", label: "Never" },
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "monthly", label: "Monthly" },
];

export function KeysPage({ current }: PageProps) {
  const [offset, setOffset] = useState(0);
  // One more than a page: whether a next page exists, without a count.
  const keys = useLoad(
    async (signal) =>
      (await api.get<Data<ApiKey[]>>("/keys", { offset, limit: PAGE_SIZE + 1, include_disabled: true }, signal)).data,
    [offset],
  );
  const [created, setCreated] = useState<{ name: string; secret: string } | undefined>();
  const [editing, setEditing] = useState<ApiKey | undefined>();
  const action = useAction();

  const update = (key: ApiKey, body: Record<string, unknown>) =>
    action.run(async () => {
      await api.patch<Data<ApiKey>>(`/keys/${key.hash}`, body);
      keys.reload();
    });
  const remove = (key: ApiKey) =>
    action.run(async () => {
      await api.delete(`/keys/${key.hash}`);
      if (editing?.hash === key.hash) setEditing(undefined);
      keys.reload();
    });

  return (
    <section aria-labelledby="keys-heading">
      <h1 id="keys-heading">Keys</h1>
      {created ? <NewSecret {...created} onDone={() => setCreated(undefined)} /> : null}
      <CreateKey
        onCreated={(name, secret) => {
          setCreated({ name, secret });
          setOffset(0);
          keys.reload();
        }}
      />
      {editing ? (
        <EditLimit
          apiKey={editing}
          busy={action.busy}
          onCancel={() => setEditing(undefined)}
          onSave={async (body) => {
            if (await update(editing, body)) setEditing(undefined);
          }}
        />
      ) : null}
      <Panel title="All keys" actions={<RefreshButton accessibleLabel="Refresh the keys" load={keys} />}>
        <ErrorBanner error={keys.error} context="The keys could not be listed" />
        <ErrorBanner error={action.error} context="The change was not made" onDismiss={action.clearError} />
        {keys.loading || action.busy ? <Progress label={action.busy ? "Saving" : "Loading keys"} /> : null}
        {keys.data ? (
          <DataTable<ApiKey>
            caption="Keys of the organization"
            rows={keys.data}
            rowKey={(k) => k.hash}
            paging={{ offset, pageSize: PAGE_SIZE, hasMore: keys.data.length > PAGE_SIZE, onPage: setOffset }}
            empty="No keys."
            columns={[
              {
                header: "Name",
                cell: (k) => (
                  <>
                    {k.name}
                    {k.is_management_key ? <span class="badge">management</span> : null}
                    {k.label === current.label ? <span class="badge">this session</span> : null}
                  </>
                ),
              },
              { header: "Key", cell: (k) => <code>{k.label}</code> },
              { header: "Status", cell: (k) => (k.disabled ? "Disabled" : "Enabled") },
              { header: "Limit", cell: (k) => limitText(k) },
              // Without limits of its own, only its workspace's and the gateway's default apply.
              { header: "Rate limits", cell: (k) => rateLimitText(k.svc_rate_limit) || "Default" },
              { header: "Spent this month", kind: "number", cell: (k) => usd(k.usage_monthly) },
              { header: "Created", cell: (k) => date(k.created_at) },
              actionsColumn((k) => (
                <>
                  <button
                    type="button"
                    aria-label={`${k.disabled ? "Enable" : "Disable"} key ${k.name}`}
                    disabled={action.busy}
                    onClick={() => update(k, { disabled: !k.disabled })}
                  >
                    {k.disabled ? "Enable" : "Disable"}
                  </button>
                  <button
                    type="button"
                    aria-label={`Set the limit of key ${k.name}`}
                    disabled={action.busy}
                    onClick={() => setEditing(k)}
                  >
                    Set limit
                  </button>
                  <DeleteButton
                    noun="key"
                    name={k.name}
                    question={`Delete key ${k.name}? Calls with it will fail.`}
                    disabled={action.busy}
                    onConfirm={() => remove(k)}
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

function limitText(key: ApiKey): string {
  if (key.limit === null) return "None";
  return `${usd(key.limit_remaining)} left of ${usd(key.limit)}${key.limit_reset ? `, resets ${key.limit_reset}` : ""}`;
}

/** A limit field: empty means no limit (null), else a number of USD at least 0. */
function limitOf(text: string): number | null {
  return text.trim() === "" ? null : Number(text);
}

function CreateKey({ onCreated }: { onCreated: (name: string, secret: string) => void }) {
  const form = useRef<HTMLFormElement>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const name = String(fields.get("name") ?? "").trim();
    const limit = limitOf(String(fields.get("limit") ?? ""));
    const reset = String(fields.get("limit_reset") ?? "");
    const rateLimit = rateLimitOf(fields);
    void action.run(async () => {
      const created = await api.post<CreatedKey>("/keys", {
        name,
        ...(limit === null ? {} : { limit }),
        ...(reset ? { limit_reset: reset } : {}),
        ...(rateLimit === null ? {} : { svc_rate_limit: rateLimit }),
        is_management_key: fields.get("is_management_key") === "on",
      });
      form.current?.reset();
      onCreated(created.data.name, created.key);
    });
  };
  return (
    <Panel title="Create a key">
      <ActionForm
        formRef={form}
        onSubmit={submit}
        submitLabel="Create key"
        busy={action.busy}
        error={action.error}
        failure="The key was not created"
        progress="Creating the key"
      >
        <label>
          Name
          <input name="name" required maxLength={100} autocomplete="off" />
        </label>
        <label>
          Credit limit (USD, empty for none)
          <input name="limit" type="number" min="0" step="any" inputMode="decimal" />
        </label>
        <label>
          Limit resets
          <select name="limit_reset">
            {INTERVALS.map((i) => (
              <option value={i.value}>{i.label}</option>
            ))}
          </select>
        </label>
        <RateLimitFields idPrefix="create-key" />
        <label class="check">
          <input name="is_management_key" type="checkbox" />
          Management key
        </label>
      </ActionForm>
    </Panel>
  );
}

/** The new key's secret, this once: the API never returns it again, and the console keeps no copy. */
function NewSecret({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  return (
    <section aria-labelledby="new-secret-heading" class="panel notice">
      <h2 id="new-secret-heading">New key {name}</h2>
      <p>Copy the key now: it is shown only this once, and cannot be read again.</p>
      <div class="secret">
        <input
          ref={field}
          readOnly
          value={secret}
          aria-label="New key secret"
          spellcheck={false}
          autocomplete="off"
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={secret} label="Copy the key" fallbackInput={() => field.current} />
      </div>
      <button type="button" onClick={onDone}>
        I have saved the key
      </button>
    </section>
  );
}

function EditLimit({
  apiKey,
  busy,
  onSave,
  onCancel,
}: {
  apiKey: ApiKey;
  busy: boolean;
  onSave: (body: Record<string, unknown>) => void;
  onCancel: () => void;
}) {
  const form = useRef<HTMLFormElement>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(form.current!);
    const reset = String(fields.get("limit_reset") ?? "");
    // null clears: no limit, or a limit that never resets, or no rate limits of its own.
    onSave({
      limit: limitOf(String(fields.get("limit") ?? "")),
      limit_reset: reset === "" ? null : reset,
      svc_rate_limit: rateLimitOf(fields),
    });
  };
  return (
    <Panel title={`Limit of key ${apiKey.name}`}>
      <ActionForm
        key={apiKey.hash}
        formRef={form}
        onSubmit={submit}
        submitLabel="Save limit"
        busy={busy}
        onCancel={onCancel}
      >
        <label>
          Credit limit (USD, empty for none)
          <input
            name="limit"
            type="number"
            min="0"
            step="any"
            inputMode="decimal"
            defaultValue={apiKey.limit === null ? "" : String(apiKey.limit)}
          />
        </label>
        <label>
          Limit resets
          {/* Preact ignores defaultValue on a <select>: the stored interval is marked on its option. */}
          <select name="limit_reset">
            {INTERVALS.map((i) => (
              <option value={i.value} selected={i.value === (apiKey.limit_reset ?? "")}>
                {i.label}
              </option>
            ))}
          </select>
        </label>
        <RateLimitFields idPrefix="edit-key" value={apiKey.svc_rate_limit} />
      </ActionForm>
    </Panel>
  );
}
