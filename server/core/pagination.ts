import type { Attributes, FindAndCountOptions, Model, ModelStatic } from "sequelize";

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
