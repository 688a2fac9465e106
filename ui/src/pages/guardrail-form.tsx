import { useRef } from "preact/hooks";
import { ActionForm } from "../components/action-form.js";
import { checked, checkedValues, listOf, listText, numberOrNull, text, textOrNull } from "../form-fields.js";
import { useAction } from "../hooks.js";
import type { DataRegion, Guardrail, ResetInterval } from "../types.js";

/**
 * The policy of a guardrail as a form, for creating one (`initial` absent: empty fields are left
 * out of the body, so the API's defaults apply) and for editing one (every field of the form is
 * sent; an empty field is null, which clears it). The per-provider zero-data-retention switches
 * and custom content filters are not in the form: an edit leaves them as they are.
 */
export type GuardrailBody = Record<string, unknown>;

const RESETS: Array<{ value: ResetInterval | ""; label: string }> = [
  { value: "", label: "Never (one-time budget)" },
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "monthly", label: "Monthly" },
];
const REGIONS: Array<{ value: DataRegion; label: string }> = [
  { value: "global", label: "Global" },
  { value: "europe", label: "Europe" },
  { value: "us", label: "US" },
];
const LISTS = [
  {
    name: "allowed_models",
    label: "Allowed models (empty: all)",
    placeholder: "e.g. openai/gpt-4o, anthropic/claude-sonnet-4",
  },
  { name: "ignored_models", label: "Ignored models", placeholder: "" },
  { name: "allowed_providers", label: "Allowed providers (empty: all)", placeholder: "e.g. openai, anthropic" },
  { name: "ignored_providers", label: "Ignored providers", placeholder: "" },
] as const;
const SWITCHES = [
  { name: "enable_paid_model_training", label: "Allow paid endpoints that train on requests" },
  { name: "enable_free_model_training", label: "Allow free endpoints that train on requests" },
  { name: "enable_free_model_publication", label: "Allow free endpoints that publish prompts" },
] as const;

export interface GuardrailFormProps {
  initial?: Guardrail;
  submitLabel: string;
  /** What the error banner says was not done. */
  failure: string;
  onSubmit: (body: GuardrailBody) => Promise<void>;
  onCancel: () => void;
}

export function GuardrailForm({ initial, submitLabel, failure, onSubmit, onCancel }: GuardrailFormProps) {
  const form = useRef<HTMLFormElement>(null);
  const action = useAction();
  const regions = new Set(initial?.allowed_data_regions ?? []);
  const zdr = initial?.enforce_zdr === true ? "true" : initial?.enforce_zdr === false ? "false" : "";
  const submit = (event: Event) => {
    event.preventDefault();
    const body = bodyOf(new FormData(form.current!), initial !== undefined);
    void action.run(() => onSubmit(body));
  };
  return (
    <ActionForm
      formRef={form}
      onSubmit={submit}
      submitLabel={submitLabel}
      busy={action.busy}
      onCancel={onCancel}
      error={action.error}
      failure={failure}
      progress="Saving the guardrail"
    >
      <label>
        Name
        <input name="name" required maxLength={200} autocomplete="off" defaultValue={initial?.name ?? ""} />
      </label>
      <label>
        Description
        <input name="description" maxLength={1000} autocomplete="off" defaultValue={initial?.description ?? ""} />
      </label>
      <label>
        Budget per key or member (USD, empty for none)
        <input
          name="limit_usd"
          type="number"
          min="0"
          step="any"
          inputMode="decimal"
          defaultValue={initial?.limit_usd == null ? "" : String(initial.limit_usd)}
        />
      </label>
      <label>
        Budget resets
        <select name="reset_interval">
          {RESETS.map((r) => (
            <option value={r.value} selected={r.value === (initial?.reset_interval ?? "")}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
      <label class="check">
        <input
          name="include_byok_in_budgets"
          type="checkbox"
          defaultChecked={initial?.include_byok_in_budgets ?? false}
        />
        BYOK spend counts against the budget
      </label>
      {LISTS.map((list) => (
        <label>
          {list.label}
          <input
            name={list.name}
            autocomplete="off"
            spellcheck={false}
            placeholder={list.placeholder}
            defaultValue={listText(initial?.[list.name])}
          />
        </label>
      ))}
      <fieldset>
        <legend>Allowed data regions (none checked: any)</legend>
        <div class="checks">
          {REGIONS.map((r) => (
            <label class="check">
              <input
                name="allowed_data_regions"
                type="checkbox"
                value={r.value}
                defaultChecked={regions.has(r.value)}
              />
              {r.label}
            </label>
          ))}
        </div>
      </fieldset>
      <label>
        Zero data retention
        <select name="enforce_zdr">
          <option value="" selected={zdr === ""}>
            Not set (inherit)
          </option>
          <option value="true" selected={zdr === "true"}>
            Enforce
          </option>
          <option value="false" selected={zdr === "false"}>
            Do not enforce
          </option>
        </select>
      </label>
      <fieldset>
        <legend>Training and publication</legend>
        <div class="checks">
          {SWITCHES.map((s) => (
            <label class="check">
              <input name={s.name} type="checkbox" defaultChecked={initial?.[s.name] ?? false} />
              {s.label}
            </label>
          ))}
        </div>
      </fieldset>
    </ActionForm>
  );
}

/** The JSON body; `complete` (an edit) sends every field, null for the empty ones. */
function bodyOf(fields: FormData, complete: boolean): GuardrailBody {
  const zdr = text(fields, "enforce_zdr");
  const reset = text(fields, "reset_interval");
  const body: GuardrailBody = {
    name: text(fields, "name"),
    description: textOrNull(fields, "description"),
    limit_usd: numberOrNull(fields, "limit_usd"),
    reset_interval: reset === "" ? null : reset,
    include_byok_in_budgets: checked(fields, "include_byok_in_budgets"),
    allowed_data_regions: checkedValues(fields, "allowed_data_regions"),
    enforce_zdr: zdr === "" ? null : zdr === "true",
  };
  for (const list of LISTS) body[list.name] = listOf(fields, list.name);
  for (const s of SWITCHES) body[s.name] = checked(fields, s.name);
  if (complete) return body;
  // A new guardrail: what is empty is left to the API's defaults.
  return Object.fromEntries(
    Object.entries(body).filter(([, value]) => value !== null && !(Array.isArray(value) && value.length === 0)),
  );
}
