import { useState } from "preact/hooks";
import type { ServerPaging } from "./components/data-table.js";

/**
 * Cursor-paged lists (batches, interns, the usage log) shown through DataTable's pager. The API
 * only pages forward (`after`, `starting_after`, `cursor`), so the cursors of the pages seen so far
 * are kept: "Next page" follows the answer's cursor, "Previous page" goes back to the one before.
 */
export interface CursorPages {
  /** The cursor of the page shown; undefined on the first page. */
  cursor: string | undefined;
  /** DataTable's `paging` for the page shown, given the answer's next cursor and `has_more`. */
  paging(next: string | null | undefined, hasMore: boolean): ServerPaging;
  /** Back to the first page (the filters changed). */
  reset(): void;
}

export function useCursorPages(pageSize: number): CursorPages {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const page = cursors.length - 1;
  return {
    cursor: cursors[page],
    paging: (next, hasMore) => ({
      offset: page * pageSize,
      pageSize,
      hasMore: hasMore && Boolean(next),
      onPage: (offset) =>
        setCursors(offset > page * pageSize && next ? [...cursors, next] : cursors.slice(0, Math.max(1, page))),
    }),
    reset: () => setCursors([undefined]),
  };
}
