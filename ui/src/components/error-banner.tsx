/**
 * An error from the API, shown with its own message (role "alert": read out when it appears).
 * `context` says what was being done ("Could not delete the key").
 */
export function ErrorBanner({
  error,
  context,
  onDismiss,
}: {
  error: string | undefined;
  context?: string;
  onDismiss?: () => void;
}) {
  if (!error) return null;
  return (
    <div class="error-banner" role="alert">
      <p>
        {context ? <strong>{context}: </strong> : null}
        {error}
      </p>
      {onDismiss ? (
        <button type="button" class="link" onClick={onDismiss} aria-label="Dismiss the error">
          Dismiss
        </button>
      ) : null}
    </div>
  );
}
