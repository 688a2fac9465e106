import { mockResponses } from "./mock-responses.js";
import { openAiChat, openAiEmbeddings } from "./mock-openai.js";
import type { MockRoute } from "./mock-plan.js";
import { header, sendError } from "./mock-wire.js";

/**
 * Azure OpenAI's two surfaces: a deployment's (`/openai/deployments/{deployment}/…`, which wants
 * `?api-version=`) and the OpenAI-style `/openai/v1/…`, both with an `api-key` header.
 */
const AZURE_PATH = /^\/azure\/openai\/(?:deployments\/([^/]+)|v1)\/(chat\/completions|embeddings|responses)$/;
export const AZURE_ROUTE: MockRoute = {
  match(method, path) {
    const found = method === "POST" ? AZURE_PATH.exec(path) : null;
    return found ? { model: found[1] === undefined ? "" : decodeURIComponent(found[1]) } : undefined;
  },
  credential: (req) => header(req.headers["api-key"]),
  sendError: (res, status, message, headers) => sendError(res, "openai", status, message, headers),
  refuse: (res) =>
    sendError(res, "openai", 401, "Access denied due to invalid subscription key or wrong API endpoint."),
  answer(x) {
    const url = new URL(x.req.url ?? "", "http://mock");
    const deployment = url.pathname.includes("/deployments/");
    if (deployment && !url.searchParams.get("api-version"))
      return sendError(x.res, "openai", 404, "Resource not found");
    // Azure serves the Responses API on its v1 surface only.
    if (url.pathname.endsWith("/responses"))
      return deployment ? sendError(x.res, "openai", 404, "Resource not found") : mockResponses(x);
    if (url.pathname.endsWith("/embeddings")) openAiEmbeddings(x);
    else openAiChat(x);
  },
};
