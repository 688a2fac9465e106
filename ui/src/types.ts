/**
 * The JSON shapes of the API that the console reads, named after the components of the gateway's
 * OpenAPI document. `generated/openapi.ts` is written from gen/openapi/openapi.json by
 * `npm run generate` (openapi-typescript), so these follow the protos; CI checks it is current.
 * ui/ imports nothing outside itself (test/architecture), hence the copy inside ui/.
 */
import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

/**
 * A schema with some of its optional fields made required. The JSON rules omit an unset message,
 * an enum at its zero value and an unset timestamp, so the document marks them optional; the
 * records the console reads always carry the fields named here (docs/api/conventions.md).
 */
type Always<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> };

/** A schema with some fields' types replaced: a list's elements as the console types them. */
type With<T, Fields> = Omit<T, keyof Fields> & Fields;

export type Budget = Schemas["gateway.v1.Budget"];
export type BudgetInterval = NonNullable<Budget["reset_interval"]>;
export type ResetInterval = Exclude<BudgetInterval, "lifetime">;

/** GET /key `data`. */
export type CurrentKey = Schemas["gateway.v1.CurrentKey"];

/** A key of GET /keys (OpenRouter's key object). */
export type ApiKey = Always<Schemas["gateway.v1.ApiKey"], "created_at">;

/** A key's or a workspace's requests and tokens per minute; the console writes null for "none", as the API reads it. */
export type SvcRateLimit = Schemas["gateway.v1.SvcRateLimit-Output"];

/** POST /keys: the key, and its secret, shown only in this answer. */
export type CreatedKey = With<Schemas["gateway.v1.CreateKeyResponse"], { data: ApiKey }>;

/** A workspace with its defaults, as GET /workspaces lists it. */
export type WorkspaceDetail = Always<Schemas["gateway.v1.Workspace"], "created_at">;
export type Workspace = Pick<WorkspaceDetail, "id" | "name" | "slug">;
export type ProviderSort = NonNullable<WorkspaceDetail["default_provider_sort"]>;
/** A server tool by wire name (`svc:web_search`), as a workspace disables it. */
export type ServerTool = NonNullable<WorkspaceDetail["disabled_server_tools"]>[number];

/** GET /workspaces/{ref}/budgets: a limit per interval, no spend (GET /key shows spend). */
export type WorkspaceBudget = Always<Schemas["gateway.v1.WorkspaceBudget"], "reset_interval" | "created_at">;

/** A guardrail; a null list allows or ignores nothing. */
export type Guardrail = Always<Schemas["gateway.v1.Guardrail"], "created_at">;
export type DataRegion = NonNullable<Guardrail["allowed_data_regions"]>[number];
export type GuardrailKeyAssignment = Always<Schemas["gateway.v1.GuardrailKeyAssignment"], "created_at">;
export type GuardrailMemberAssignment = Always<Schemas["gateway.v1.GuardrailMemberAssignment"], "created_at">;

/** GET /organization/members. */
export type Member = Always<Schemas["gateway.v1.Member"], "role" | "created_at">;

/** A model of GET /models. */
export type Model = Always<Schemas["gateway.v1.Model"], "architecture" | "pricing" | "top_provider" | "links">;
export type Percentiles = Schemas["gateway.v1.PercentileStats"];
/** One provider deployment of a model, with its recent stats (null without recent traffic). */
export type ModelEndpoint = Always<Schemas["gateway.v1.ModelEndpoint"], "pricing">;
/** GET /models/{author}/{slug}/endpoints `data`. */
export type ModelWithEndpoints = With<
  Always<Schemas["gateway.v1.ModelWithEndpoints"], "architecture">,
  { endpoints: ModelEndpoint[] }
>;
/** A provider of GET /providers, with its key pool's state by position. */
export type ProviderKey = Always<Schemas["gateway.v1.ProviderKey"], "state">;
export type Provider = With<Schemas["gateway.v1.Provider"], { svc_keys: ProviderKey[] }>;
/** GET /models and GET /embeddings/models. */
export type ListedModels = With<Always<Schemas["gateway.v1.ListModelsResponse"], "links">, { data: Model[] }>;

export type BatchResult = Schemas["gateway.v1.BatchResultItem"];
/** GET /batches/{id} (unwrapped); `results` only in a terminal status, null in lists. */
export type Batch = Always<Schemas["gateway.v1.Batch"], "status" | "endpoint" | "request_counts" | "usage">;
export type BatchStatus = Batch["status"];
/** GET /batches: newest first, `after` = `last_id` for the next page. */
export type BatchList = With<Schemas["gateway.v1.ListBatchesResponse"], { data: Batch[] }>;
/** DELETE /batches/{id}. */
export type BatchDeletion = Always<Schemas["gateway.v1.DeleteBatchResponse"], "deletion">;

/** An intern record (`data` of the /interns record routes). */
export type Intern = Always<Schemas["gateway.v1.Intern"], "status" | "created_at" | "updated_at">;
export type InternStatus = Intern["status"];
/** GET /interns: newest first; `next_cursor` → `starting_after`. */
export type InternList = With<Schemas["gateway.v1.ListInternsResponse"], { data: Intern[] }>;
/**
 * The parts of an intern chat's tool call that the console keeps: the intern's question
 * (`svc.provide_input`), echoed on the answer.
 */
export type InternToolCall = Always<Pick<Schemas["gateway.v1.InternToolCall-Output"], "id" | "function">, "function">;
/** One `chat.completion.chunk` of the intern chat stream. */
export type InternChatChunk = Schemas["gateway.v1.InternChatChunk"];

/** GET /generation?id= `data`, and each row of GET /generations (docs/api/activity.md). */
export type Generation = Always<Schemas["gateway.v1.Generation"], "created_at" | "api_type" | "status">;
export type GenerationStatus = Generation["status"];
/** GET /generations: newest first; `cursor` for the next (older) page. */
export type GenerationList = With<Schemas["gateway.v1.ListGenerationsResponse"], { data: Generation[] }>;

// The console's own shapes: envelopes and free-form values that the protos leave generic.

export interface Data<T> {
  data: T;
}

/** A page of a list that counts: `{data, total_count}` (workspaces, guardrails, members, assignments). */
export interface Counted<T> {
  data: T[];
  total_count: number;
}

/** One row of POST /analytics/query (a Struct): `bucket` with a granularity, dimension values and metrics by name. */
export type AnalyticsRow = Record<string, string | number | boolean | null>;

/** The `arguments` of a `svc.provide_input` question (a JSON string in the tool call). */
export type InternQuestion =
  | { kind: "permission"; operation: string; command?: string; options: string[] }
  | { kind: "question"; question: string; options?: string[] };
