import { useState } from "preact/hooks";

/**
 * Copies `text` to the clipboard. The Clipboard API needs a secure context (https or localhost);
 * elsewhere the text is selected in `fallbackInput` for the user to copy by hand.
 */
export function CopyButton({
  text,
  label,
  fallbackInput,
}: {
  text: string;
  label: string;
  fallbackInput?: () => HTMLInputElement | null;
}) {
  const [state, setState] = useState<"idle" | "copied" | "manual">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      fallbackInput?.()?.select();
      setState("manual");
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="hint">
        {state === "copied"
          ? "Copied to the clipboard."
          : state === "manual"
            ? "Selected: press Ctrl+C (⌘C) to copy."
            : ""}
      </span>
    </span>
  );
}
