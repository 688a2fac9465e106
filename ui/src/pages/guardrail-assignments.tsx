import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmButton } from "../components/confirm-button.js";
import { DataTable } from "../components/data-table.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Panel } from "../components/panel.js";
import { CloseButton } from "../components/panel-buttons.js";
import { Progress } from "../components/progress.js";
import { date } from "../format.js";
import { useAction, useLoad } from "../hooks.js";
import { listAll } from "../list-all.js";
import type {
  ApiKey,
  Counted,
  Guardrail,
  GuardrailKeyAssignment,
  GuardrailMemberAssignment,
  Member,
} from "../types.js";

/**
 * Who a guardrail applies to: its keys (POST /guardrails/{id}/assignments/keys and .../keys/remove,
 * by key hash) and its members (.../members and .../members/remove, by user id), each listed a page
 * at a time. The picker offers the organization's keys (GET /keys) or members (GET
 * /organization/members) that are not assigned yet. Both halves are one component, told the
 * differences by a `Kind`.
 */
const PAGE_SIZE = 20;

interface Kind<Assignment, Candidate> {
  /** "key" or "member": in headings, labels and the routes (`assignments/keys`). */
  noun: "key" | "member";
  /** The header of the column that names the key or member. */
  nameHeader: string;
  /** The request field that carries the ids. */
  idsField: "key_hashes" | "member_user_ids";
  candidates(signal: AbortSignal): Promise<{ items: Candidate[]; complete: boolean }>;
  candidateId(candidate: Candidate): string;
  candidateLabel(candidate: Candidate): string;
  assignedId(assignment: Assignment): string;
  /** The assignment's name, from the candidates when the assignment carries none. */
  assignedName(assignment: Assignment, candidates: ReadonlyMap<string, Candidate>): string;
  extraColumns: Array<{ header: string; cell: (assignment: Assignment) => ComponentChildren }>;
}

const KEYS: Kind<GuardrailKeyAssignment, ApiKey> = {
  noun: "key",
  nameHeader: "Name",
  idsField: "key_hashes",
  candidates: (signal) => listAll<ApiKey>("/keys", { include_disabled: true }, signal),
  candidateId: (k) => k.hash,
  candidateLabel: (k) => `${k.name} (${k.label})${k.disabled ? ", disabled" : ""}`,
  assignedId: (a) => a.key_hash,
  assignedName: (a) => a.key_name,
  extraColumns: [{ header: "Key", cell: (a) => <code>{a.key_label}</code> }],
};

const MEMBERS: Kind<GuardrailMemberAssignment, Member> = {
  noun: "member",
  nameHeader: "Member",
  idsField: "member_user_ids",
  candidates: (signal) => listAll<Member>("/organization/members", {}, signal),
  candidateId: (m) => m.id,
  candidateLabel: memberLabel,
  assignedId: (a) => a.user_id,
  assignedName: (a, members) => {
    const member = members.get(a.user_id);
    return member ? memberLabel(member) : a.user_id;
  },
  extraColumns: [],
};

function memberLabel(member: Member): string {
  const name = [member.first_name, member.last_name].filter(Boolean).join(" ");
  return name ? `${name} <${member.email}>` : member.email;
}

export function GuardrailAssignments({ guardrail, onClose }: { guardrail: Guardrail; onClose: () => void }) {
  return (
    <Panel
      title={`Assignments of guardrail ${guardrail.name}`}
      takeFocus
      actions={<CloseButton accessibleLabel="Close the assignments" onClose={onClose} />}
    >
      <div class="columns">
        <Assignments kind={KEYS} guardrail={guardrail} />
        <Assignments kind={MEMBERS} guardrail={guardrail} />
      </div>
    </Panel>
  );
}

function Assignments<Assignment extends { id: string; created_at: string }, Candidate>({
  kind,
  guardrail,
}: {
  kind: Kind<Assignment, Candidate>;
  guardrail: Guardrail;
}) {
  const route = `/guardrails/${guardrail.id}/assignments/${kind.noun}s`;
  const [offset, setOffset] = useState(0);
  const assigned = useLoad(
    (signal) => api.get<Counted<Assignment>>(route, { offset, limit: PAGE_SIZE }, signal),
    [route, offset],
  );
  // Every assignment (not only this page's), to leave the assigned ones out of the picker.
  const [generation, setGeneration] = useState(0);
  const choices = useLoad(
    async (signal) => {
      const [candidates, all] = await Promise.all([kind.candidates(signal), listAll<Assignment>(route, {}, signal)]);
      const taken = new Set(all.items.map(kind.assignedId));
      return {
        byId: new Map(candidates.items.map((c) => [kind.candidateId(c), c])),
        free: candidates.items.filter((c) => !taken.has(kind.candidateId(c))),
        complete: candidates.complete,
      };
    },
    [route, generation],
  );
  const action = useAction();
  const picker = useRef<HTMLSelectElement>(null);

  const change = (suffix: "" | "/remove", id: string) =>
    action.run(async () => {
      await api.post(route + suffix, { [kind.idsField]: [id] });
      assigned.reload();
      setGeneration((g) => g + 1);
    });
  const assign = (event: Event) => {
    event.preventDefault();
    const id = picker.current?.value;
    if (id) void change("", id);
  };

  const free = choices.data?.free ?? [];
  const nameOf = (a: Assignment) => kind.assignedName(a, choices.data?.byId ?? new Map());
  const Noun = kind.noun === "key" ? "Key" : "Member";
  return (
    <section aria-label={`${Noun}s of guardrail ${guardrail.name}`}>
      <h3>{Noun}s</h3>
      <form method="post" class="controls" onSubmit={assign}>
        <label>
          {Noun} to assign
          <select ref={picker} disabled={free.length === 0}>
            {free.length === 0 ? (
              <option value="">{choices.loading ? `Loading ${kind.noun}s…` : `No other ${kind.noun}`}</option>
            ) : null}
            {free.map((c) => (
              <option value={kind.candidateId(c)}>{kind.candidateLabel(c)}</option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={action.busy || free.length === 0}>
          Assign {kind.noun}
        </button>
      </form>
      {choices.data && !choices.data.complete ? (
        <p class="hint">Only the first 1000 {kind.noun}s can be picked here.</p>
      ) : null}
      <ErrorBanner error={choices.error} context={`The ${kind.noun}s could not be listed`} />
      <ErrorBanner error={assigned.error} context={`The ${kind.noun} assignments could not be listed`} />
      <ErrorBanner error={action.error} context="The assignment was not changed" onDismiss={action.clearError} />
      {assigned.loading || action.busy ? (
        <Progress label={action.busy ? "Saving" : `Loading ${kind.noun} assignments`} />
      ) : null}
      {assigned.data ? (
        <DataTable<Assignment>
          caption={`${Noun}s assigned to guardrail ${guardrail.name}`}
          rows={assigned.data.data}
          rowKey={(a) => a.id}
          paging={{
            offset,
            pageSize: PAGE_SIZE,
            hasMore: offset + PAGE_SIZE < assigned.data.total_count,
            onPage: setOffset,
          }}
          empty={`No ${kind.noun}s.`}
          columns={[
            { header: kind.nameHeader, cell: nameOf },
            ...kind.extraColumns,
            { header: "Assigned", cell: (a) => date(a.created_at) },
            {
              header: "Actions",
              cell: (a) => (
                <ConfirmButton
                  label="Unassign"
                  accessibleLabel={`Unassign ${kind.noun} ${nameOf(a)}`}
                  question={`Stop applying ${guardrail.name} to ${nameOf(a)}?`}
                  confirmLabel={`Yes, unassign ${nameOf(a)}`}
                  disabled={action.busy}
                  onConfirm={() => void change("/remove", kind.assignedId(a))}
                />
              ),
            },
          ]}
        />
      ) : null}
    </section>
  );
}
