/**
 * Reading a client's Responses or Messages body, whose shape is only a claim until checked: each
 * reader names the field's path in its 400, so a client learns which of *its* fields is wrong
 * (the chat request it is translated into is an internal detail). JSON `null` means "not set",
 * as everywhere on the REST wire.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { gatewayError } from "../../../../wire/errors.js";
import { isObject } from "../../providers/json-shape.js";

/** The ids a translated answer carries: the gateway's generation id and the creation time (Unix seconds). */
export interface FormatIds {
  id: string;
  createdAt: number;
}

/** For streams: without `id`, the id of the chat chunks (the generation id) is used. */
export interface StreamIds {
  id?: string;
  createdAt: number;
}

/**
 * A well-formed request that chat cannot express (a provider's built-in tool, a stored response,
 * a content type chat lacks): a 400 naming the field, but only once the call would go to a
 * provider that needs the translation. An endpoint that speaks the format itself serves it as sent.
 */
const UNTRANSLATABLE = new WeakSet<ConnectError>();

export function untranslatable(message: string): ConnectError {
  const error = gatewayError(400, message);
  UNTRANSLATABLE.add(error);
  return error;
}

export function isUntranslatable(err: unknown): err is ConnectError {
  return typeof err === "object" && err !== null && UNTRANSLATABLE.has(err as ConnectError);
}

/**
 * The fields of `from` the translation did not read, copied to `to` as sent (unless it set one of
 * that name): a field the gateway does not know reaches the provider, never dropped.
 */
export function copyUnread(from: JsonObject, to: JsonObject, read: ReadonlySet<string>): void {
  for (const name in from) {
    if (!read.has(name) && to[name] === undefined && from[name] !== undefined) to[name] = from[name]!;
  }
}

/** Gateway routing fields a translated body may carry exactly as a chat body does. */
const ROUTING_FIELDS = ["models", "provider", "session_id"];

export function copyRoutingFields(from: JsonObject, to: JsonObject): void {
  for (const name of ROUTING_FIELDS) if (from[name] !== undefined && from[name] !== null) to[name] = from[name];
}

export function optionalString(value: JsonValue | undefined, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw gatewayError(400, `${path} must be a string`);
  return value;
}

export function requiredString(value: JsonValue | undefined, path: string): string {
  const text = optionalString(value, path);
  if (text === undefined) throw gatewayError(400, `${path} is required`);
  return text;
}

export function optionalNumber(value: JsonValue | undefined, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw gatewayError(400, `${path} must be a number`);
  return value;
}

export function optionalBoolean(value: JsonValue | undefined, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw gatewayError(400, `${path} must be a boolean`);
  return value;
}

export function optionalObject(value: JsonValue | undefined, path: string): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw gatewayError(400, `${path} must be an object`);
  return value;
}

export function requiredObject(value: JsonValue | undefined, path: string): JsonObject {
  const object = optionalObject(value, path);
  if (object === undefined) throw gatewayError(400, `${path} is required`);
  return object;
}

export function optionalArray(value: JsonValue | undefined, path: string): JsonValue[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw gatewayError(400, `${path} must be an array`);
  return value;
}

/** Copies the scalar fields that mean the same in both formats, type-checked. */
export function copyScalars(
  from: JsonObject,
  to: JsonObject,
  fields: { numbers?: string[]; booleans?: string[]; strings?: string[] },
): void {
  for (const name of fields.numbers ?? []) setIfDefined(to, name, optionalNumber(from[name], name));
  for (const name of fields.booleans ?? []) setIfDefined(to, name, optionalBoolean(from[name], name));
  for (const name of fields.strings ?? []) setIfDefined(to, name, optionalString(from[name], name));
}

export function setIfDefined(to: JsonObject, name: string, value: JsonValue | undefined): void {
  if (value !== undefined) to[name] = value;
}

/** A token count of a chat usage object (absent or malformed counts are 0). */
export function countAt(usage: JsonValue | undefined, ...path: string[]): number {
  let node: JsonValue | undefined = usage;
  for (const key of path) node = isObject(node) ? node[key] : undefined;
  return typeof node === "number" && Number.isFinite(node) && node > 0 ? Math.trunc(node) : 0;
}

/** The first choice of a chat completion or chunk, or an empty object. */
export function firstChoice(body: JsonObject): JsonObject {
  const choices = Array.isArray(body.choices) ? body.choices : [];
  const choice = choices.find((c) => isObject(c) && (c.index ?? 0) === 0) ?? choices[0];
  return isObject(choice) ? choice : {};
}

/**
 * The chat answer's own top-level fields: a translated answer says each in its format's words.
 * Any other field (a provider's `citations`, …) is the provider's, and reaches the client on the
 * translated answer as it came.
 */
const CHAT_ANSWER_FIELDS = new Set([
  "id",
  "object",
  "created",
  "model",
  "choices",
  "usage",
  "provider",
  "system_fingerprint",
]);

/**
 * Copies a chat completion's (or chunk's) provider fields onto the translated answer; the `null`s
 * the contract shape adds are not the provider's.
 */
export function copyProviderFields(from: JsonObject, to: JsonObject): void {
  for (const name in from) {
    const value = from[name];
    if (!CHAT_ANSWER_FIELDS.has(name) && value !== undefined && value !== null && to[name] === undefined)
      to[name] = value;
  }
}
