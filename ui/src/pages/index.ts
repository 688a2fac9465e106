import type { ComponentType } from "preact";
import { BatchesPage } from "./batches.js";
import { GuardrailsPage } from "./guardrails.js";
import { InternsPage } from "./interns.js";
import { KeysPage } from "./keys.js";
import { ModelsPage } from "./models.js";
import { OverviewPage } from "./overview.js";
import type { PageProps } from "./page.js";
import { UsagePage } from "./usage.js";
import { WorkspacesPage } from "./workspaces.js";

/**
 * The console's pages, in the navigation's order, each at `#/<path>`. The entries without a
 * `page` are planned and not shown yet: to add one, write ui/src/pages/<path>.tsx exporting the
 * page component and set `page` on its line (docs/console.md, "Adding a page").
 */
export interface PageEntry {
  path: string;
  title: string;
  page?: ComponentType<PageProps>;
}

export const PAGES: PageEntry[] = [
  { path: "overview", title: "Overview", page: OverviewPage },
  { path: "keys", title: "Keys", page: KeysPage },
  { path: "workspaces", title: "Workspaces & budgets", page: WorkspacesPage },
  { path: "guardrails", title: "Guardrails", page: GuardrailsPage },
  { path: "models", title: "Models", page: ModelsPage },
  { path: "batches", title: "Batches", page: BatchesPage },
  { path: "interns", title: "Interns", page: InternsPage },
  { path: "usage", title: "Usage log", page: UsagePage },
];

export const DEFAULT_PAGE = "overview";

/** The pages that exist, for the navigation and the router. */
export function availablePages(): Array<Required<PageEntry>> {
  return PAGES.filter((entry): entry is Required<PageEntry> => entry.page !== undefined);
}
