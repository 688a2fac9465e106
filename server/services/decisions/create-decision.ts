/**
 * POST /api/alpha/decisions: one chat call per question, all sent in parallel to the same endpoint
 * within one inference call (inference-call.ts), so a decision is governed, routed, reserved and
 * settled like one chat completion: one rate-limit hit, one reservation of the worst case, one
 * ledger row (api `chat`) whose generation id is the decision's `id` and whose tokens and cost are
 * the sums over the questions. When any question fails on an endpoint, the others are cancelled
 * and the whole decision moves on to the next endpoint, so every answer comes from the one
 * `model`/`provider` the response names. Only endpoints whose catalog entry supports logprobs are
 * routed to.
 *
 * @module
 */
import { setMaxListeners } from "node:events";
import { create, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type {
  CreateDecisionRequest,
  CreateDecisionResponseSchema,
  DecisionAnswer,
} from "../../../gen/gateway/alpha/decisions_pb.js";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import { estimatePromptTokens, providerFor, sessionIdOf, usdNumber } from "../../engine/index.js";
import type { InferenceCall } from "../../engine/inference/inference-call.js";
import type { Deps } from "../deps.js";
import type { UpstreamUsage } from "../../engine/providers/provider.js";
import { REQUIRED_PARAMETERS, questionRequest } from "./decision-prompt.js";
import { questionsOf, stateText } from "./decision-questions.js";
import { answerOf } from "./label-probabilities.js";

type DecisionResponse = MessageInitShape<typeof CreateDecisionResponseSchema>;

export async function createDecision(
  deps: Deps,
  req: CreateDecisionRequest,
  ctx: HandlerContext,
): Promise<DecisionResponse> {
  const questions = questionsOf(req);
  const state = stateText(req);
  const requests = questions.map((question) => ({ question, body: questionRequest(question, state) }));
  const promptTokensOf = requests.map(({ body }) => estimatePromptTokens(body.messages as JsonValue[]));
  const call = await openCall(
    deps,
    ctx,
    req.model,
    requests.map(({ body }) => body),
    {
      promptTokens: promptTokensOf.reduce((sum, n) => sum + n, 0),
      // One answer token per question.
      completionTokens: questions.length,
    },
  );
  try {
    const served = await call.attempt(async (target) => {
      const adapter = providerFor(target.kind).chat;
      const siblings = new AbortController();
      const signal = AbortSignal.any([call.signal, siblings.signal]);
      // Every question's upstream request listens on it; that many listeners is not a leak.
      setMaxListeners(0, signal);
      try {
        return await Promise.all(
          requests.map(async ({ question, body }, index) => {
            const result = await adapter.chat(target, body, signal);
            // Read inside the attempt: an answer without usable logprobs may fall back to the next endpoint.
            const answer = answerOf(question, result.body);
            return { name: question.name, answer, usage: result.usage ?? estimatedUsage(promptTokensOf[index]!) };
          }),
        );
      } catch (err) {
        siblings.abort();
        throw err;
      }
    });
    const usage = sumUsage(served.value.map((v) => v.usage));
    const cost = call.settle(served, {
      status: "success",
      httpStatus: 200,
      usage,
      latencyMs: served.latencyMs,
      generationMs: served.latencyMs,
    });
    const answers: { [name: string]: DecisionAnswer } = {};
    for (const { name, answer } of served.value) answers[name] = answer;
    return {
      id: call.generationId,
      model: served.attempt.model.id,
      provider: served.attempt.endpoint.providerName,
      usage: {
        cost: usdNumber(cost),
        inputTokens: BigInt(usage.promptTokens),
        outputTokens: BigInt(usage.completionTokens),
      },
      answers,
    };
  } finally {
    call.close();
  }
}

async function openCall(
  deps: Deps,
  ctx: HandlerContext,
  model: string,
  bodies: JsonObject[],
  tokens: { promptTokens: number; completionTokens: number },
): Promise<InferenceCall> {
  try {
    return await deps.engine.open(ctx, {
      api: "chat",
      // The guardrails' content filters see (and redact) every question's prompt.
      bodies,
      modelIds: [model],
      // Endpoints that cannot return logprobs are skipped, as `require_parameters` does for chat.
      preferences: create(ProviderPreferencesSchema, { requireParameters: true }),
      parameters: REQUIRED_PARAMETERS,
      user: undefined,
      sessionId: sessionIdOf(undefined, ctx),
      ...tokens,
      serverTools: [],
      streamed: false,
    });
  } catch (err) {
    // Routing's 404 speaks of provider preferences, which this caller never sent.
    if (err instanceof ConnectError && httpErrorOf(err).status === 404) {
      throw gatewayError(
        404,
        `No endpoint of ${model} returns logprobs, which decisions are computed from; ` +
          "use a model served by a provider that returns them",
      );
    }
    throw err;
  }
}

/** When a provider reports no usage, the prompt is estimated and the answer is its one token. */
function estimatedUsage(promptTokens: number): UpstreamUsage {
  return { promptTokens, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 };
}

function sumUsage(usages: UpstreamUsage[]): UpstreamUsage {
  return usages.reduce(
    (sum, u) => ({
      promptTokens: sum.promptTokens + u.promptTokens,
      completionTokens: sum.completionTokens + u.completionTokens,
      reasoningTokens: sum.reasoningTokens + u.reasoningTokens,
      cachedTokens: sum.cachedTokens + u.cachedTokens,
    }),
    { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 },
  );
}
