import { useEffect, useState } from "preact/hooks";

/**
 * Pages are addressed in the URL's fragment (`#/keys`): the gateway serves one static file for
 * the whole app, needs no rewrite rule, and the fragment never reaches a server or a log.
 */
export function href(page: string): string {
  return `#/${page}`;
}

/** The page named by the fragment (`#/keys` → "keys"; "" when none). */
export function currentPage(): string {
  return decodeURIComponent(location.hash.replace(/^#\/?/, "").split(/[/?]/, 1)[0] ?? "");
}

export function useCurrentPage(): string {
  const [page, setPage] = useState(currentPage);
  useEffect(() => {
    const changed = () => setPage(currentPage());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return page;
}
