import type { Attributes, FindAndCountOptions, Model, ModelStatic } from "sequelize";
import { gatewayError } from "../../../wire/errors.js";

/** The one offset/limit rule: bounds are checked by the proto's field rules, defaults live here. */
export interface Page {
  offset: number;
  limit: number;
}

export function pageOf(request: { offset?: number; limit?: number }, defaultLimit: number): Page {
  return { offset: request.offset ?? 0, limit: request.limit ?? defaultLimit };
}

/** One page of rows and the count over all pages (`total_count`); lists default to 100 items. */
export async function findPage<M extends Model>(
  model: ModelStatic<M>,
  request: { offset?: number; limit?: number },
  query: Omit<FindAndCountOptions<Attributes<M>>, "offset" | "limit" | "group">,
  defaultLimit = 100,
): Promise<{ rows: M[]; totalCount: number }> {
  const { rows, count } = await model.findAndCountAll({ ...query, ...pageOf(request, defaultLimit) });
  return { rows, totalCount: count };
}

/**
 * The one opaque-cursor rule for lists paged by a sort key (newest first, `has_more`): the key of
 * the page's last row as base64url JSON. A cursor this list did not give out is a 400.
 */
export function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

interface CursorRule {
  /** The request parameter that carries the cursor; `cursor` unless given. */
  param?: string;
  /** The response field that gave it out, i.e. what the caller should pass; `cursor` unless given. */
  issuedAs?: string;
  /**
   * The list's check of each part's form. A part reaches SQL as a typed value, so anything
   * but the exact form the list writes must stop here: a cast that fails in Postgres is a 500.
   */
  accept?: (key: readonly string[]) => boolean;
}

export function decodeCursor(cursor: string, arity: number, rule: CursorRule = {}): string[] {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = undefined;
  }
  const parts =
    Array.isArray(key) && key.length === arity && key.every((part) => typeof part === "string")
      ? (key as string[])
      : undefined;
  if (!parts || (rule.accept && !rule.accept(parts))) {
    throw gatewayError(
      400,
      `${rule.param ?? "cursor"} is not a cursor this list gave out; ` +
        `pass the previous page's ${rule.issuedAs ?? "cursor"} unchanged`,
    );
  }
  return parts;
}

/**
 * A row time as keyset cursors carry it: UTC with microseconds, as Postgres writes it with
 * `to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` (a Date keeps milliseconds
 * only, and a cursor rounded to them skips rows). The `accept` check of such a cursor: only that
 * form, and a real time, since text Postgres cannot cast (month 13, year 0) would be a 500.
 */
export function isCursorTime(at: string): boolean {
  if (!CURSOR_TIME.test(at) || at.startsWith("0000")) return false;
  const seconds = `${at.slice(0, 19)}Z`;
  return !Number.isNaN(Date.parse(seconds)) && new Date(seconds).toISOString().slice(0, 19) === at.slice(0, 19);
}

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
