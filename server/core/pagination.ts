/** The one offset/limit rule: bounds are checked by the proto's field rules, defaults live here. */
export interface Page {
  offset: number;
  limit: number;
}

export function pageOf(request: { offset?: number; limit?: number }, defaultLimit: number): Page {
  return { offset: request.offset ?? 0, limit: request.limit ?? defaultLimit };
}
