import { api, type Query } from "./api.js";

/**
 * Every item of a list the API pages by offset and limit (at most 100 a page), for the pickers
 * that choose among all of an organization's keys, members, workspaces or guardrails. It stops at
 * `cap` items so a very large organization cannot stall a page; `complete` says whether it did.
 */
const PAGE = 100;

export async function listAll<T>(
  path: string,
  query: Query = {},
  signal?: AbortSignal,
  cap = 1000,
): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  for (;;) {
    const page = (await api.get<{ data: T[] }>(path, { ...query, offset: items.length, limit: PAGE }, signal)).data;
    items.push(...page);
    if (page.length < PAGE) return { items, complete: true };
    if (items.length >= cap) return { items, complete: false };
  }
}
