/** Work in flight: an indeterminate progress bar with a label (role "status": announced politely). */
export function Progress({ label }: { label: string }) {
  return (
    <div class="progress" role="status">
      <progress aria-label={label} />
      <span>{label}…</span>
    </div>
  );
}

/** How much of a limit is left, as a meter with its numbers in words for screen readers. */
export function Remaining({
  remaining,
  limit,
  label,
  text,
}: {
  remaining: number;
  limit: number;
  label: string;
  text: string;
}) {
  const value = limit > 0 ? Math.max(0, Math.min(remaining, limit)) : 0;
  return (
    <meter
      class="remaining"
      min={0}
      max={limit > 0 ? limit : 1}
      low={limit * 0.2}
      optimum={limit}
      value={value}
      aria-label={label}
      aria-valuetext={text}
      title={text}
    />
  );
}
