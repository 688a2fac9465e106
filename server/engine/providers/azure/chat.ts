import type { ChatApi } from "../chat-api.js";
import { openAiCompatibleChat, type OpenAiRoute } from "../openai/chat.js";
import { openAiCompatibleResponses } from "../openai/responses.js";
import type { NativeApi } from "../native-api.js";
import type { UpstreamTarget } from "../provider.js";

/**
 * Azure OpenAI: OpenAI's wire format under Azure's paths, with an `api-key` header. With a dated
 * `api_version` a call goes to the deployment, `/openai/deployments/{deployment}/chat/completions
 * ?api-version=…` (the endpoint's `upstream_model_id` is the deployment's name); with `v1`, to
 * Azure's OpenAI-style surface, `/openai/v1/chat/completions`, which takes the deployment as
 * `model`. A target without settings (a private endpoint) uses `v1`.
 */
export const AZURE_DEFAULT_API_VERSION = "v1";

const AZURE_ROUTE: OpenAiRoute = {
  path(target, operation) {
    const version = apiVersionOf(target);
    if (version === "v1") return `/openai/v1/${operation}`;
    return (
      `/openai/deployments/${encodeURIComponent(target.upstreamModelId)}/${operation}` +
      `?api-version=${encodeURIComponent(version)}`
    );
  },
  headers: (target, accept) => ({ "api-key": target.apiKey, accept }),
};

export const azureChat: ChatApi = openAiCompatibleChat(AZURE_ROUTE);

/** Azure serves the Responses API on its v1 surface (`/openai/v1/responses`); a dated API version is sent chat. */
export const azureResponses: NativeApi = openAiCompatibleResponses(
  AZURE_ROUTE,
  (target) => apiVersionOf(target) === "v1",
);

function apiVersionOf(target: UpstreamTarget): string {
  return target.settings?.apiVersion ?? AZURE_DEFAULT_API_VERSION;
}
