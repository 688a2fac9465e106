import type { Loaded } from "../hooks.js";

/**
 * The buttons beside a panel's heading (Panel's `actions`). Every one shows the same word, so its
 * accessible name says what it acts on ("Refresh the keys", "Close batch …").
 */

/** Loads `load` again; disabled while a load is in flight. */
export function RefreshButton({
  accessibleLabel,
  load,
}: {
  accessibleLabel: string;
  load: Pick<Loaded<unknown>, "loading" | "reload">;
}) {
  return (
    <button type="button" aria-label={accessibleLabel} onClick={load.reload} disabled={load.loading}>
      Refresh
    </button>
  );
}

/** Closes the panel a row's button opened. */
export function CloseButton({ accessibleLabel, onClose }: { accessibleLabel: string; onClose: () => void }) {
  return (
    <button type="button" aria-label={accessibleLabel} onClick={onClose}>
      Close
    </button>
  );
}

/** A table row's button that opens the row in a panel; pressed while the panel shows that row. */
export function OpenButton({
  label,
  accessibleLabel,
  open,
  onOpen,
}: {
  label: string;
  accessibleLabel: string;
  open: boolean;
  onOpen: () => void;
}) {
  return (
    <button type="button" aria-label={accessibleLabel} aria-pressed={open} onClick={onOpen}>
      {label}
    </button>
  );
}
