import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import {
  DecisionQuestionType,
  type CreateDecisionRequest,
  type DecisionQuestion,
} from "../../../gen/gateway/alpha/decisions_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { isObject } from "../../engine/index.js";

/**
 * The questions of a decision request, checked and turned into what the classifier works with:
 * every answer the model may give is a short label (one token in every common tokenizer), and each
 * label stands for one criterion of the question.
 *
 * - `noul`: the labels `true` and `false`.
 * - `choice`: the letters A, B, C, … in the order the options were sent; the option name and its
 *   description are shown next to the letter. Letters rather than the names, because names can
 *   span several tokens or share their first one, and only the first token's distribution is read.
 * - `score`: the digits 0 … n-1, the criteria array index, which is also the answer's key.
 *
 * Limits (the API shows none for decisions; decisions.md): 1 to 32 questions, names 1 to 128
 * characters; a choice has 2 to 20 options (20 is the most `top_logprobs` a provider returns, so
 * every option can be seen); a score 2 to 10 levels (one digit each). Oversized content is a 413:
 * the state over 256 KiB of JSON, a question's instructions and criteria over 32 KiB.
 */
export type QuestionKind = "noul" | "choice" | "score";

export interface Criterion {
  /** What the model answers with. */
  label: string;
  /** Where the criterion's probability goes in the answer: `true`/`false`, the option name, the index. */
  key: string;
  description: string;
}

export interface Question {
  name: string;
  kind: QuestionKind;
  instructions: string;
  criteria: Criterion[];
}

export const MAX_QUESTIONS = 32;
const MAX_NAME = 128;
export const MAX_CHOICE_OPTIONS = 20;
export const MAX_SCORE_LEVELS = 10;
export const MAX_STATE_BYTES = 256 * 1024;
export const MAX_QUESTION_BYTES = 32 * 1024;

const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

export function questionsOf(req: CreateDecisionRequest): Question[] {
  const entries = Object.entries(req.questions);
  if (entries.length > MAX_QUESTIONS)
    throw gatewayError(400, `questions must hold at most ${MAX_QUESTIONS} questions, got ${entries.length}`);
  return entries.map(([name, question]) => questionOf(name, question));
}

/** The state as JSON text for the prompt; over MAX_STATE_BYTES it is a 413. */
export function stateText(req: CreateDecisionRequest): string {
  const text = JSON.stringify(req.state ?? {});
  if (Buffer.byteLength(text) > MAX_STATE_BYTES)
    throw tooLarge(`state is larger than ${MAX_STATE_BYTES} bytes of JSON`);
  return text;
}

function questionOf(name: string, question: DecisionQuestion): Question {
  const field = `questions.${name}`;
  if (name === "" || [...name].length > MAX_NAME)
    throw gatewayError(400, `question names must be 1 to ${MAX_NAME} characters`);
  const kind = kindOf(question.type, field);
  if (!question.criteria) throw gatewayError(400, `${field}.criteria is required`);
  const criteria = CRITERIA[kind](toJson(ValueSchema, question.criteria), `${field}.criteria`);
  const bytes =
    Buffer.byteLength(question.instructions) +
    criteria.reduce((sum, c) => sum + Buffer.byteLength(c.key) + Buffer.byteLength(c.description), 0);
  if (bytes > MAX_QUESTION_BYTES)
    throw tooLarge(`${field}: instructions and criteria are larger than ${MAX_QUESTION_BYTES} bytes`);
  return { name, kind, instructions: question.instructions, criteria };
}

function kindOf(type: DecisionQuestionType, field: string): QuestionKind {
  switch (type) {
    case DecisionQuestionType.NOUL:
      return "noul";
    case DecisionQuestionType.CHOICE:
      return "choice";
    case DecisionQuestionType.SCORE:
      return "score";
    case DecisionQuestionType.UNSPECIFIED:
      throw gatewayError(400, `${field}.type is required: noul, choice or score`);
    default:
      throw gatewayError(400, `${field}.type has an unknown value (${String(type)}): use noul, choice or score`);
  }
}

const CRITERIA: Record<QuestionKind, (value: JsonValue, field: string) => Criterion[]> = {
  noul(value, field) {
    const shape = `${field} must be an object with exactly the keys true and false, each a description string`;
    if (!isObject(value)) throw gatewayError(400, shape);
    const keys = Object.keys(value);
    if (keys.length !== 2 || typeof value.true !== "string" || typeof value.false !== "string")
      throw gatewayError(400, shape);
    return [
      { label: "true", key: "true", description: value.true },
      { label: "false", key: "false", description: value.false },
    ];
  },

  choice(value, field) {
    if (!isObject(value))
      throw gatewayError(400, `${field} must be an object mapping each option name to a description string`);
    const options = Object.entries(value);
    if (options.length < 2 || options.length > MAX_CHOICE_OPTIONS) {
      throw gatewayError(400, `${field} must have 2 to ${MAX_CHOICE_OPTIONS} options, got ${options.length}`);
    }
    return options.map(([option, description], index) => {
      if (option === "" || [...option].length > MAX_NAME)
        throw gatewayError(400, `${field}: option names must be 1 to ${MAX_NAME} characters`);
      if (typeof description !== "string") throw gatewayError(400, `${field}.${option} must be a description string`);
      return { label: LETTERS[index]!, key: option, description };
    });
  },

  score(value, field) {
    if (!Array.isArray(value))
      throw gatewayError(400, `${field} must be an array of description strings, lowest level first`);
    if (value.length < 2 || value.length > MAX_SCORE_LEVELS)
      throw gatewayError(400, `${field} must have 2 to ${MAX_SCORE_LEVELS} levels, got ${value.length}`);
    return value.map((description, index) => {
      if (typeof description !== "string") throw gatewayError(400, `${field}[${index}] must be a description string`);
      return { label: String(index), key: String(index), description };
    });
  },
};

function tooLarge(message: string) {
  return gatewayError(413, message, { reason: "payload_too_large", retryable: false });
}
