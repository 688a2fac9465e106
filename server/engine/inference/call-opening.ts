/**
 * How a live call opens, before any attempt: the caller's governance (cached), the content filters
 * of its guardrails (a blocking filter refuses the call here: nothing reserved, nothing billed),
 * the route, the response cache, and admission of the worst case against this instance's leases
 * (rate limits, free-model quota, every budget layer, token limits; no round trip while the
 * leases cover it). A refusal by a limit is a ledger row of its own.
 *
 * @module
 */
import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../platform/rpc/auth.js";
import { CONTENT_FLAGGED_HEADER } from "../../../wire/exchange.js";
import { rateLimitHeaders } from "../../../wire/rate-limit-headers.js";
import { REQUEST_ID_HEADER } from "../../../wire/request-id.js";
import { isRateLimit, quantitiesFor } from "../admission/quantities.js";
import { refusedLimit } from "../admission/refusals.js";
import { isFreeEndpoint } from "../catalog/catalog.js";
import { filterCall } from "../content-filters/call-filters.js";
import { countFiltering, logFlags } from "../content-filters/filter-reports.js";
import { blockedError } from "../content-filters/request-content.js";
import type { Engine } from "../engine.js";
import { checkEndUser } from "../governance/end-user-registration.js";
import { generationId } from "./call-ledger.js";
import type { CallRequest } from "./call-request.js";
import { worstCaseCost } from "./cost-estimate.js";
import { InferenceCall } from "./inference-call.js";
import { recordRefusal } from "./rate-limit-refusals.js";
import { checkServerTools } from "./server-tools.js";
import { worstCaseTokens } from "./token-estimate.js";

export async function openCall(engine: Engine, ctx: HandlerContext, request: CallRequest): Promise<InferenceCall> {
  const endUser = checkEndUser(request.user);
  const context = await engine.callerContext(callerOf(ctx));
  checkServerTools(request.serverTools, context.workspace);
  const filtering = filterCall(context.guardrails, request.api, request.bodies, engine.config.contentFilterMaxBytes);
  countFiltering(engine, filtering);
  if (filtering.blockedBy !== undefined) throw blockedError(filtering.blockedBy);
  const attempts = await engine.plan(
    context,
    {
      modelIds: request.modelIds.length > 0 ? request.modelIds : [context.workspace.defaultTextModel ?? ""],
      api: request.api,
      preferences: request.preferences,
      parameters: request.parameters,
    },
    ctx.requestHeader.get("x-forwarded-host"),
  );
  const endpoints = attempts.map((a) => a.endpoint);
  const cached = await request.cache?.lookup(context, attempts[0]!, ctx.signal);
  const quantities = quantitiesFor(context, engine.config, endpoints.every(isFreeEndpoint), new Date());
  // A cache hit costs nothing: it counts against the request rate limits only, never a budget or a token limit.
  const admitted = cached
    ? engine.leases.admit(quantities.filter(isRateLimit), "0")
    : engine.leases.admit(
        quantities,
        worstCaseCost(endpoints, request.promptTokens, request.completionTokens),
        worstCaseTokens(endpoints, request.promptTokens, request.completionTokens),
      );
  const [ticket] = await Promise.all([
    admitted.catch((err: unknown) => {
      // A 429 of a limit is a ledger row of its own (analytics groups 429s by limit).
      const limit = refusedLimit(err);
      if (limit) {
        const { api, streamed } = request;
        const refused = {
          generationId: generationId(),
          requestId: ctx.requestHeader.get(REQUEST_ID_HEADER),
          api,
          modelId: attempts[0]!.model.id,
          endUser,
          sessionId: request.sessionId ?? null,
          streamed,
        };
        recordRefusal(engine, context, refused, limit);
      }
      throw err;
    }),
    endUser ? engine.endUsers.register(context.caller.organization.id, endUser) : undefined,
  ]);
  // OpenAI's x-ratelimit-* headers, for the tightest request and token limits of the call.
  for (const [name, value] of Object.entries(rateLimitHeaders(ticket.readings()))) ctx.responseHeader.set(name, value);
  const contentFlagged = filtering.matched.some((filter) => filter.action === "flag");
  const call = new InferenceCall(engine, ctx, { context, request, attempts, ticket, endUser, contentFlagged, cached });
  if (contentFlagged) ctx.responseHeader.set(CONTENT_FLAGGED_HEADER, "true");
  logFlags(engine, filtering, { requestId: call.requestId, generationId: call.generationId });
  return call;
}
