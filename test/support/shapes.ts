/** Shapes several suites assert on. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Every field of a workspace. */
export const WORKSPACE_FIELDS = [
  "id",
  "name",
  "slug",
  "description",
  "created_at",
  "updated_at",
  "created_by",
  "default_guardrail_id",
  "default_image_model",
  "default_text_model",
  "default_provider_sort",
  "disabled_server_tools",
  "include_byok_in_budgets",
  "io_logging_api_key_ids",
  "io_logging_sampling_rate",
  "is_data_discount_logging_enabled",
  "is_observability_broadcast_enabled",
  "is_observability_io_logging_enabled",
];
