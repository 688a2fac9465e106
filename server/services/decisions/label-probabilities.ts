import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  DecisionAnswerSchema,
  DecisionQuestionType,
  type DecisionAnswer,
} from "../../../gen/gateway/alpha/decisions_pb.js";
import { UpstreamError, isObject } from "../../engine/index.js";
import type { Question } from "./decision-questions.js";

/**
 * From the first token's log probabilities to an answer. Candidates are the `top_logprobs` of the
 * first answer token plus the token actually produced. A token counts for a label when it equals
 * the label after trimming whitespace, ignoring case (`true`, ` true` and `True` are one answer);
 * a label's mass is the sum of exp(logprob) over its tokens, and the masses are normalized over the
 * question's labels (tokens that are no label are ignored). A label missing from the top
 * alternatives gets probability 0.
 *
 * An answer without logprobs, or whose alternatives hold none of the labels, cannot be turned into
 * probabilities: that is a provider failure (`protocol`), so routing tries the next endpoint and
 * the caller finally gets a 502 naming the reason. No sampling fallback (decisions.md).
 */
export function answerOf(question: Question, completion: JsonObject): DecisionAnswer {
  const distribution = labelDistribution(question, firstTokenCandidates(question, completion));
  switch (question.kind) {
    case "noul":
      return create(DecisionAnswerSchema, {
        answer: { case: "noul", value: { type: DecisionQuestionType.NOUL, noul: distribution[0]! } },
      });
    case "choice": {
      const best = argMax(distribution);
      return create(DecisionAnswerSchema, {
        answer: {
          case: "choice",
          value: {
            type: DecisionQuestionType.CHOICE,
            choice: question.criteria[best]!.key,
            confidence: distribution[best]!,
            probabilities: byKey(question, distribution),
          },
        },
      });
    }
    case "score": {
      const best = argMax(distribution);
      return create(DecisionAnswerSchema, {
        answer: {
          case: "score",
          value: {
            type: DecisionQuestionType.SCORE,
            score: distribution.reduce((sum, p, index) => sum + index * p, 0),
            confidence: distribution[best]!,
            probabilities: byKey(question, distribution),
            legend: Object.fromEntries(question.criteria.map((c) => [c.key, c.description])),
          },
        },
      });
    }
  }
}

interface Candidate {
  token: string;
  logprob: number;
}

/** The alternatives of the first answer token (OpenAI `choices[0].logprobs.content[0]`). */
function firstTokenCandidates(question: Question, completion: JsonObject): Candidate[] {
  const [choice] = Array.isArray(completion.choices) ? completion.choices : [];
  const logprobs = isObject(choice) ? choice.logprobs : undefined;
  const [first] = isObject(logprobs) && Array.isArray(logprobs.content) ? logprobs.content : [];
  if (!isObject(first))
    throw new UpstreamError(
      "protocol",
      `question ${question.name}: the answer carries no logprobs, which decisions are computed from`,
    );
  const candidates = new Map<string, number>();
  const add = (entry: unknown) => {
    if (
      isObject(entry) &&
      typeof entry.token === "string" &&
      typeof entry.logprob === "number" &&
      !Number.isNaN(entry.logprob) &&
      !candidates.has(entry.token)
    ) {
      candidates.set(entry.token, entry.logprob);
    }
  };
  if (Array.isArray(first.top_logprobs)) first.top_logprobs.forEach(add);
  add(first);
  return [...candidates].map(([token, logprob]) => ({ token, logprob }));
}

function labelDistribution(question: Question, candidates: Candidate[]): number[] {
  const masses = question.criteria.map((criterion) => {
    const label = criterion.label.toLowerCase();
    return candidates.reduce((sum, c) => (c.token.trim().toLowerCase() === label ? sum + Math.exp(c.logprob) : sum), 0);
  });
  const total = masses.reduce((sum, mass) => sum + mass, 0);
  if (!(total > 0) || !Number.isFinite(total)) {
    const labels = question.criteria.map((c) => c.label).join(", ");
    throw new UpstreamError(
      "protocol",
      `question ${question.name}: none of the labels (${labels}) is among the top logprobs of the answer`,
    );
  }
  return masses.map((mass) => mass / total);
}

/** Index of the largest probability; the first criterion wins a tie. */
function argMax(distribution: number[]): number {
  return distribution.reduce((best, p, index) => (p > distribution[best]! ? index : best), 0);
}

function byKey(question: Question, distribution: number[]): { [key: string]: number } {
  return Object.fromEntries(question.criteria.map((c, index) => [c.key, distribution[index]!]));
}
