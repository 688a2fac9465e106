import { useRef, useState } from "preact/hooks";
import { call, messageOf } from "./api.js";
import { ErrorBanner } from "./components/error-banner.js";
import { Progress } from "./components/progress.js";
import type { CurrentKey, Data } from "./types.js";

/**
 * The sign-in screen: an API key is pasted once and checked with GET /key before it is kept; a
 * refused key shows the API's own message. The field is a password field the browser does not
 * offer to save, and it is emptied once the key is accepted.
 */
export function SignIn({
  notice,
  onSignedIn,
}: {
  notice: string | undefined;
  onSignedIn: (key: string, current: CurrentKey) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = input.current?.value.trim() ?? "";
    if (!key) {
      setError("Paste an API key of this gateway.");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const { data } = await call<Data<CurrentKey>>("GET", "/key", { key });
      if (input.current) input.current.value = "";
      onSignedIn(key, data);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <h1>Model Gateway console</h1>
      <form method="post" onSubmit={submit} aria-labelledby="sign-in-heading">
        <h2 id="sign-in-heading">Sign in</h2>
        <p>
          Paste an API key of this gateway. A management key sees and manages everything; another key sees its own spend
          and budgets. The key stays in this tab only and is forgotten when you sign out or close it.
        </p>
        {notice ? <p role="status">{notice}</p> : null}
        <ErrorBanner error={error} context="The key was refused" />
        <label for="api-key">API key</label>
        <input
          ref={input}
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          autoCapitalize="off"
          required
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {busy ? <Progress label="Checking the key" /> : null}
      </form>
    </main>
  );
}
