import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A destructive action in two steps: the button asks, then "Confirm" runs it and "Cancel" backs
 * out. In the page (no browser dialog), so keyboard and screen-reader users meet it in place.
 */
export function ConfirmButton(props: {
  label: string;
  accessibleLabel: string;
  question: string;
  confirmLabel: string;
  disabled?: boolean;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button
        type="button"
        class="danger"
        aria-label={props.accessibleLabel}
        disabled={props.disabled}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    );
  }
  return (
    // biome-ignore lint/a11y/useSemanticElements: an inline group inside a table row; a fieldset is a block of a form.
    <span class="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>
      <button
        ref={confirm}
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/**
 * A table row's Delete, confirmed first: named "Delete <noun> <name>" (just "Delete <name>" where the
 * table holds one kind of thing whose names say it, as interns), confirmed with "Yes, delete <name>".
 */
export function DeleteButton({
  noun,
  name,
  question,
  disabled,
  onConfirm,
}: {
  noun?: string;
  name: string;
  question: string;
  disabled: boolean;
  onConfirm: () => void;
}) {
  return (
    <ConfirmButton
      label="Delete"
      accessibleLabel={noun ? `Delete ${noun} ${name}` : `Delete ${name}`}
      question={question}
      confirmLabel={`Yes, delete ${name}`}
      disabled={disabled}
      onConfirm={onConfirm}
    />
  );
}
