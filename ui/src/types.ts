/**
 * The JSON shapes of the API that the console reads, as the REST facade renders them (proto field
 * names, docs/api/conventions.md). Written by hand: ui/ depends on nothing outside itself (test/architecture).
 */
export type ResetInterval = "daily" | "weekly" | "monthly";
export type BudgetInterval = ResetInterval | "lifetime";

export interface Budget {
  budget_id: string | null;
  guardrail_id: string | null;
  include_byok: boolean;
  limit_usd: number;
  remaining_usd: number;
  spend_usd: number;
  reset_interval: BudgetInterval | null;
  resets_at: string | null;
  scope: "key" | "member" | "workspace" | string;
}

/** A key's credit limit and spend (USD), as GET /key and GET /keys both carry them. */
export interface KeySpend {
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: ResetInterval | null;
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
}

/** GET /key `data`. */
export interface CurrentKey extends KeySpend {
  label: string;
  is_management_key: boolean;
  workspace_id: string;
  expires_at: string | null;
  budgets: Budget[];
  effective_budget: Budget | null;
}

/** A key of GET /keys (OpenRouter's key object). */
export interface ApiKey extends KeySpend {
  hash: string;
  name: string;
  label: string;
  disabled: boolean;
  created_at: string;
  updated_at: string | null;
  expires_at: string | null;
  workspace_id: string;
  is_management_key: boolean;
}

export interface Workspace {
  id: string;
  name: string;
  slug: string;
}

export interface Data<T> {
  data: T;
}

/** POST /keys: the key, and its secret, shown only in this answer. */
export interface CreatedKey {
  data: ApiKey;
  key: string;
}

/** One row of POST /analytics/query: `bucket` with a granularity, dimension values and metrics by name. */
export type AnalyticsRow = Record<string, string | number | boolean | null>;

/** A page of a list that counts: `{data, total_count}` (workspaces, guardrails, members, assignments). */
export interface Counted<T> {
  data: T[];
  total_count: number;
}

export type ProviderSort = "price" | "throughput" | "latency" | "exacto";

/** A workspace with its defaults, as GET /workspaces lists it. */
export interface WorkspaceDetail extends Workspace {
  description: string | null;
  created_at: string;
  updated_at: string | null;
  created_by: string;
  default_guardrail_id: string;
  default_image_model: string | null;
  default_text_model: string | null;
  default_provider_sort: ProviderSort | null;
  /** Wire names, e.g. `svc:web_search`; null when none is disabled. */
  disabled_server_tools: string[] | null;
  include_byok_in_budgets: boolean;
}

/** GET /workspaces/{ref}/budgets: a limit per interval, no spend (GET /key shows spend). */
export interface WorkspaceBudget {
  id: string;
  workspace_id: string;
  limit_usd: number;
  reset_interval: BudgetInterval;
  created_at: string;
  updated_at: string | null;
}

export type DataRegion = "global" | "europe" | "us";

/** A guardrail; a null list allows or ignores nothing. */
export interface Guardrail {
  id: string;
  name: string;
  description: string | null;
  workspace_id: string;
  created_at: string;
  updated_at: string | null;
  limit_usd: number | null;
  reset_interval: ResetInterval | null;
  include_byok_in_budgets: boolean;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_data_regions: DataRegion[] | null;
  enforce_zdr: boolean | null;
  enable_free_model_publication: boolean;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  content_filter_builtins: Array<{ slug: string; label: string; action: string }>;
}

export interface GuardrailKeyAssignment {
  id: string;
  guardrail_id: string;
  key_hash: string;
  key_label: string;
  key_name: string;
  assigned_by: string;
  created_at: string;
}

export interface GuardrailMemberAssignment {
  id: string;
  user_id: string;
  organization_id: string;
  guardrail_id: string;
  assigned_by: string | null;
  created_at: string;
}

/** GET /organization/members. */
export interface Member {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
  created_at: string;
}

/** Prices in USD as decimal strings: per token (prompt, completion), per image, per request. */
export interface ModelPricing {
  prompt: string;
  completion: string;
  image: string;
  request: string;
}

export interface ModelArchitecture {
  input_modalities: string[];
  output_modalities: string[];
  modality: string;
  tokenizer: string;
  instruct_type: string | null;
}

/** A model of GET /models. */
export interface Model {
  id: string;
  canonical_slug: string;
  name: string;
  description: string;
  /** Unix seconds. */
  created: number;
  context_length: number;
  architecture: ModelArchitecture;
  pricing: ModelPricing;
  top_provider: { context_length: number | null; max_completion_tokens: number | null; is_moderated: boolean };
  supported_parameters: string[];
  expiration_date: string | null;
  knowledge_cutoff: string | null;
  /** `details`: the path of the model's endpoints, under /api/v1. */
  links: { details: string };
}

export interface Percentiles {
  p50: number;
  p75: number;
  p90: number;
  p99: number;
}

/** One provider deployment of a model, with its recent stats (null without recent traffic). */
export interface ModelEndpoint {
  name: string;
  model_id: string;
  provider_name: string;
  tag: string;
  context_length: number;
  max_completion_tokens: number | null;
  max_prompt_tokens: number | null;
  quantization: string | null;
  /** 0 healthy, -1 degraded, -2 down. */
  status: number;
  pricing: ModelPricing;
  supported_parameters: string[];
  supports_implicit_caching: boolean;
  latency_last_30m: Percentiles | null;
  throughput_last_30m: Percentiles | null;
  uptime_last_5m: number | null;
  uptime_last_30m: number | null;
  uptime_last_1d: number | null;
}

/** GET /models/{author}/{slug}/endpoints `data`. */
export interface ModelWithEndpoints {
  id: string;
  name: string;
  created: number;
  description: string;
  architecture: ModelArchitecture;
  endpoints: ModelEndpoint[];
}

/** GET /batches/{id} (unwrapped); `results` only in a terminal status, null in lists. */
export type BatchStatus = "validating" | "in_progress" | "finalizing" | "completed" | "failed" | "expired" | "cancelling" | "cancelled";

export interface BatchResult {
  id: string;
  custom_id: string;
  response: { body: Record<string, unknown>; request_id: string; status_code: number } | null;
  error: { message: string; param: string; type: string; error_type: string } | null;
}

export interface Batch {
  id: string;
  status: BatchStatus;
  endpoint: string;
  model: string;
  /** Unix seconds. */
  created_at: number;
  finalized_at: number | null;
  request_counts: { completed: number; failed: number; total: number };
  error: { message: string; code?: number } | null;
  results: BatchResult[] | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost: number };
}

/** GET /batches: newest first, `after` = `last_id` for the next page. */
export interface BatchList {
  data: Batch[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** DELETE /batches/{id}. */
export interface BatchDeletion {
  id: string;
  deletion: { svc: string; upstream: { provider: string; status: string } };
}

export type InternStatus = "queued" | "provisioning" | "running" | "failed" | "stopped" | "destroying" | "destroy_failed";

/** An intern record (`data` of the /interns record routes). */
export interface Intern {
  id: string;
  name: string;
  description: string | null;
  model: string | null;
  status: InternStatus;
  hostname: string | null;
  workspace_id: string;
  last_failure_message: string | null;
  progress: { step_label: string; step_number: number; total_steps: number } | null;
  created_at: string;
  updated_at: string;
}

/** GET /interns: newest first; `next_cursor` → `starting_after`. */
export interface InternList {
  data: Intern[];
  has_more: boolean;
  next_cursor?: string;
}

/** A tool call of the intern chat: the intern's question (`svc.provide_input`), echoed on the answer. */
export interface InternToolCall {
  index?: number;
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** One `chat.completion.chunk` of the intern chat stream. */
export interface InternChatChunk {
  id: string;
  choices: Array<{ index: number; delta: { role?: string; content?: string; tool_calls?: InternToolCall[] }; finish_reason: "stop" | "tool_calls" | "error" | null }>;
  error?: { code: number; message: string; metadata?: { reason: string; retryable: boolean } };
  session_id?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cost?: number } | null;
}

/** The `arguments` of a `svc.provide_input` question. */
export type InternQuestion = { kind: "permission"; operation: string; command?: string; options: string[] } | { kind: "question"; question: string; options?: string[] };

export type GenerationStatus = "success" | "error" | "cancelled";

/** GET /generation?id= `data`, and each row of GET /generations (docs/api/activity.md). */
export interface Generation {
  id: string;
  total_cost: number;
  usage: number;
  upstream_inference_cost: number | null;
  created_at: string;
  model: string;
  streamed: boolean;
  cancelled: boolean;
  provider_name: string | null;
  latency: number | null;
  generation_time: number | null;
  tokens_prompt: number;
  tokens_completion: number;
  native_tokens_reasoning: number;
  native_tokens_cached: number;
  is_byok: boolean;
  external_user: string | null;
  api_type: "completions" | "embeddings" | "video";
  provider_responses: Array<{ endpoint_id: string | null; model_permaslug: string; provider_name: string | null; status: number; latency: number | null; is_byok: boolean }>;
  data_region: string | null;
  status: GenerationStatus;
  http_status: number;
  api_key_hash: string;
  workspace_id: string;
}

/** GET /generations: newest first; `cursor` for the next (older) page. */
export interface GenerationList {
  data: Generation[];
  has_more: boolean;
  cursor: string | null;
}

/** GET /models and GET /embeddings/models. */
export interface ListedModels {
  data: Model[];
  links: { next: string | null };
  total_count: number;
}
