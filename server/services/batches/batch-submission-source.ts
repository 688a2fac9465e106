import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import {
  BatchRequestItemSchema,
  CreateBatchRequestSchema,
  type CreateBatchRequest,
} from "../../../gen/gateway/v1/batches_pb.js";
import type { HttpBody } from "../../../gen/google/api/httpbody_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { assertValid } from "../../platform/rpc/validation.js";
import { decodeWireJson, findField } from "../../../wire/json-input.js";
import { JsonBodySplitter } from "./json-body-splitter.js";

/**
 * A batch submission as batch-submission.ts reads it, whichever way it came: first the batch's
 * fields (`requests` left empty; endpoint and model are known and valid), then its items in order,
 * each checked against the proto's rules, then the batch's fields again, complete. From a
 * CreateBatch message that is a walk over it; from the JSON body of CreateBatchFromJson it is the
 * body parsed as it streams in, never held whole.
 */
export type SubmissionPart =
  | { kind: "batch"; batch: CreateBatchRequest }
  | { kind: "item"; customId: string; body: JsonObject }
  | { kind: "end"; batch: CreateBatchRequest };

/** CPU time a submission may take before it lets other requests run (ms). */
const YIELD_EVERY_MS = 10;

/** The parts of a CreateBatch message, already checked by the validation interceptor. */
export async function* messageSubmission(req: CreateBatchRequest): AsyncGenerator<SubmissionPart> {
  yield { kind: "batch", batch: req };
  const pause = pauser();
  for (const item of req.requests) {
    yield { kind: "item", customId: item.customId, body: item.body! };
    await pause();
  }
  yield { kind: "end", batch: req };
}

/**
 * The parts of a JSON body streamed in HttpBody slices: the JSON rules of the REST facade
 * (docs/api/conventions.md: proto or lowerCamel names, unknown fields ignored, `null` as unset, a wrong
 * type is a 400 naming the field) and the proto's field rules, as a unary request would get them.
 * Items are passed on as they complete once `endpoint` and `model` are known; items that come
 * before those fields wait in memory. A field given twice is a 400, so the fields an item was
 * checked against cannot change behind it. More than `limit` bytes is a 413.
 */
export async function* jsonSubmission(slices: AsyncIterable<HttpBody>, limit: number): AsyncGenerator<SubmissionPart> {
  const requests = findField(CreateBatchRequestSchema, "requests")!;
  const splitter = new JsonBodySplitter(new Set([requests.name, requests.jsonName]));
  const fields: JsonObject = {};
  const given = new Set<string>();
  let batch: CreateBatchRequest | undefined;
  const waiting: SubmissionPart[] = [];
  let count = 0;
  const pause = pauser();

  const once = (name: string) => {
    if (given.has(name)) throw gatewayError(400, `Malformed JSON body: the field '${name}' is given twice`);
    given.add(name);
  };

  for await (const slice of slices) {
    if (splitter.bytesRead + slice.data.length > limit) {
      throw gatewayError(413, `Request body exceeds the limit of ${limit} bytes for this endpoint`, {
        reason: "payload_too_large",
        retryable: false,
      });
    }
    for (const part of splitter.write(slice.data)) {
      if (part.kind === "array") {
        once(requests.name);
        continue;
      }
      if (part.kind === "field") {
        const field = findField(CreateBatchRequestSchema, part.name);
        if (!field) continue;
        once(field.name);
        fields[field.name] = part.value;
        continue;
      }
      const item = itemOf(part.value, part.index);
      count++;
      if (!batch && given.has("endpoint") && given.has("model")) {
        batch = batchOf(fields, true);
        yield { kind: "batch", batch };
      }
      if (batch) yield item;
      else waiting.push(item);
    }
    await pause();
  }
  splitter.end();
  const complete = batchOf(fields, count > 0);
  if (!batch) {
    yield { kind: "batch", batch: complete };
    for (const item of waiting) yield item;
  }
  yield { kind: "end", batch: complete };
}

/** Item bodies are not Structs here: a placeholder stands for the items in the list's rules. */
const CHECKED_ITEM = create(BatchRequestItemSchema, { customId: "checked", body: {} });

/** The batch's fields as a message, checked as the interceptor checks a CreateBatch request. */
function batchOf(fields: JsonObject, hasItems: boolean): CreateBatchRequest {
  const batch = decodeWireJson(CreateBatchRequestSchema, fields);
  // The items were checked one by one as they arrived; the list's own rule only needs to know
  // whether there was one.
  batch.requests = hasItems ? [CHECKED_ITEM] : [];
  assertValid(CreateBatchRequestSchema, batch);
  batch.requests = [];
  return batch;
}

/** One element of `requests`, decoded and checked without turning its body into a Struct. */
function itemOf(value: JsonValue, index: number): SubmissionPart & { kind: "item" } {
  const path = `requests[${index}]`;
  if (value === null) throw gatewayError(400, `${path} must not be null`);
  if (typeof value !== "object" || Array.isArray(value)) throw gatewayError(400, `${path} must be an object`);
  let customId: JsonValue = null;
  let body: JsonValue = null;
  // As the facade's decoder: either name, the last one given wins, null is unset.
  for (const [key, v] of Object.entries(value)) {
    if (v === null) continue;
    if (key === "custom_id" || key === "customId") customId = v;
    else if (key === "body") body = v;
  }
  if (customId !== null && typeof customId !== "string") throw gatewayError(400, `${path}.custom_id must be a string`);
  if (body !== null && (typeof body !== "object" || Array.isArray(body)))
    throw gatewayError(400, `${path}.body must be an object`);
  const item = create(BatchRequestItemSchema, { customId: customId ?? "", body: body ?? undefined });
  // The field rules, and the text and number rules on the custom id and every key and value of
  // the body, as the validation interceptor applies them to a CreateBatch message.
  try {
    assertValid(BatchRequestItemSchema, item);
  } catch (err) {
    if (err instanceof ConnectError) throw gatewayError(400, `${path}.${err.rawMessage}`);
    throw err;
  }
  return { kind: "item", customId: item.customId, body: item.body! };
}

/** Lets other requests run once this one has had the CPU for a while. */
function pauser(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < YIELD_EVERY_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
