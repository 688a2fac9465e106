/**
 * The foundation model a Bedrock model id names, as `provider.model-version` (e.g.
 * `anthropic.claude-3-5-haiku-20241022-v1:0`): ids come bare, with a cross-region inference
 * profile's geography first (`us.`, `eu.`, `apac.`, `global.`), or as an ARN whose last part is
 * one of those. A provisioned throughput's ARN does not name its model; callers treat what they
 * do not recognise as a model without model-specific fields.
 */
export function baseModelId(modelId: string): string {
  const last = modelId.slice(modelId.lastIndexOf("/") + 1);
  return last.replace(/^(?:us|us-gov|eu|apac|jp|au|ca|global)\./, "");
}

/** The id as the one path segment `/model/{modelId}/…` expects: a model id holds `:`, an ARN `/` as well. */
export function modelPath(modelId: string, operation: "converse" | "converse-stream" | "invoke"): string {
  return `/model/${encodeURIComponent(modelId)}/${operation}`;
}
