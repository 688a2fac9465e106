import type { ComponentChildren, Ref } from "preact";
import { ErrorBanner } from "./error-banner.js";
import { Progress } from "./progress.js";

/**
 * A form that asks the API for one change (create a key, save a workspace): its fields in the
 * grid, then the submit button (disabled while the change runs) and Cancel where the form can be
 * backed out of; under the form, what the form's own loads reported (`notices`), why the change
 * failed and that it is running. A form whose caller shows its error and progress elsewhere (the
 * page's list) leaves `failure` and `progress` out.
 */
export interface ActionFormProps {
  formRef: Ref<HTMLFormElement>;
  onSubmit: (event: Event) => void;
  submitLabel: string;
  busy: boolean;
  onCancel?: () => void;
  error?: string;
  /** What the error banner says was not done ("The key was not created"). */
  failure?: string;
  /** What the progress bar says while busy ("Creating the key"). */
  progress?: string;
  notices?: ComponentChildren;
  children: ComponentChildren;
}

export function ActionForm({
  formRef,
  onSubmit,
  submitLabel,
  busy,
  onCancel,
  error,
  failure,
  progress,
  notices,
  children,
}: ActionFormProps) {
  return (
    <>
      <form ref={formRef} method="post" class="form-grid" onSubmit={onSubmit}>
        {children}
        <div class="form-actions">
          <button type="submit" disabled={busy}>
            {submitLabel}
          </button>
          {onCancel ? (
            <button type="button" onClick={onCancel}>
              Cancel
            </button>
          ) : null}
        </div>
      </form>
      {notices}
      {failure ? <ErrorBanner error={error} context={failure} /> : null}
      {progress && busy ? <Progress label={progress} /> : null}
    </>
  );
}
