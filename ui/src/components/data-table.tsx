import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/**
 * A table with a caption (its accessible name) that pages: by the API's offset and limit when
 * `paging` is given (the page asks for one row more than it shows to know whether there is a next
 * page), else through `rows` in the browser. Wide tables scroll sideways inside their frame at
 * phone width instead of widening the page.
 */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => ComponentChildren;
  /** "number" aligns right. */
  kind?: "number";
}

export interface ServerPaging {
  offset: number;
  pageSize: number;
  hasMore: boolean;
  onPage(offset: number): void;
}

export interface DataTableProps<Row> {
  caption: string;
  columns: Array<Column<Row>>;
  rows: Row[];
  rowKey: (row: Row) => string;
  paging?: ServerPaging;
  /** Rows per page when paging in the browser. */
  pageSize?: number;
  empty?: string;
}

export function DataTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  paging,
  pageSize = 20,
  empty = "Nothing to show.",
}: DataTableProps<Row>) {
  const [localOffset, setLocalOffset] = useState(0);
  useEffect(() => {
    if (!paging && localOffset >= rows.length)
      setLocalOffset(Math.max(0, Math.floor((rows.length - 1) / pageSize) * pageSize));
  }, [paging, rows.length, localOffset, pageSize]);
  const offset = paging ? paging.offset : localOffset;
  const size = paging ? paging.pageSize : pageSize;
  const shown = paging ? rows.slice(0, size) : rows.slice(localOffset, localOffset + size);
  const hasMore = paging ? paging.hasMore : localOffset + size < rows.length;
  const go = (next: number) => (paging ? paging.onPage(next) : setLocalOffset(next));
  const total = paging ? undefined : rows.length;
  return (
    <div class="data-table">
      <div class="table-frame">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th scope="col" class={column.kind}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.length === 0 ? (
              <tr>
                <td colSpan={columns.length} class="empty">
                  {empty}
                </td>
              </tr>
            ) : (
              shown.map((row) => (
                <tr key={rowKey(row)}>
                  {columns.map((column) => (
                    <td class={column.kind} data-label={column.header}>
                      <div class="cell">{column.cell(row)}</div>
                    </td>
                  ))}
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
      {offset > 0 || hasMore ? (
        <nav class="pager" aria-label={`Pages of ${caption}`}>
          <button type="button" disabled={offset === 0} onClick={() => go(Math.max(0, offset - size))}>
            Previous page
          </button>
          <span>
            Rows {shown.length === 0 ? 0 : offset + 1}–{offset + shown.length}
            {total === undefined ? "" : ` of ${total}`}
          </span>
          <button type="button" disabled={!hasMore} onClick={() => go(offset + size)}>
            Next page
          </button>
        </nav>
      ) : null}
    </div>
  );
}

/** The last column of a table whose rows have buttons: a row's buttons side by side. */
export function actionsColumn<Row>(buttons: (row: Row) => ComponentChildren): Column<Row> {
  return { header: "Actions", cell: (row) => <span class="actions">{buttons(row)}</span> };
}
