import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

/**
 * A titled region of a page (its heading is its accessible name), with buttons beside the heading
 * (`actions`). One that a row's button opens (`takeFocus`) moves the focus, and so the view, to its
 * heading: keyboard and screen-reader users land where the new content is, not on the row.
 */
export interface PanelProps {
  title: string;
  actions?: ComponentChildren;
  takeFocus?: boolean;
  children: ComponentChildren;
}

export function Panel({ title, actions, takeFocus = false, children }: PanelProps) {
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (takeFocus) heading.current?.focus();
  }, [takeFocus, title]);
  const head = (
    <h2 id={id} ref={heading} tabIndex={takeFocus ? -1 : undefined}>
      {title}
    </h2>
  );
  return (
    <section aria-labelledby={id} class="panel">
      {actions ? (
        <div class="section-head">
          {head}
          <span class="actions">{actions}</span>
        </div>
      ) : (
        head
      )}
      {children}
    </section>
  );
}
