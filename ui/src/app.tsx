import { useEffect, useState } from "preact/hooks";
import { call, messageOf, setUnauthorizedHandler } from "./api.js";
import { Progress } from "./components/progress.js";
import { availablePages, DEFAULT_PAGE } from "./pages/index.js";
import { href, useCurrentPage } from "./router.js";
import { forgetKey, storedKey, storeKey } from "./session.js";
import { SignIn } from "./sign-in.js";
import type { CurrentKey, Data } from "./types.js";

/**
 * The shell: the sign-in screen until a key is accepted, then the navigation (a menu button folds
 * it away at phone width), the signed-in key, sign-out, and the page the URL's fragment names.
 */
type State =
  | { kind: "checking" }
  | { kind: "signed-out"; notice?: string }
  | { kind: "signed-in"; current: CurrentKey };

export function App() {
  const [state, setState] = useState<State>(() => (storedKey() ? { kind: "checking" } : { kind: "signed-out" }));

  useEffect(() => {
    // A key the API refuses from now on (deleted, disabled, expired) ends the session, saying why.
    setUnauthorizedHandler((error) => {
      forgetKey();
      setState({ kind: "signed-out", notice: `Signed out: ${error.message}` });
    });
    return () => setUnauthorizedHandler(undefined);
  }, []);

  useEffect(() => {
    if (state.kind !== "checking") return;
    // A reload: the tab's key is checked again before anything is shown.
    call<Data<CurrentKey>>("GET", "/key").then(
      ({ data }) => setState({ kind: "signed-in", current: data }),
      (err: unknown) => {
        forgetKey();
        setState({ kind: "signed-out", notice: `Signed out: ${messageOf(err)}` });
      },
    );
  }, [state.kind]);

  if (state.kind === "checking") {
    return (
      <main id="main" class="sign-in">
        <Progress label="Signing in" />
      </main>
    );
  }
  if (state.kind === "signed-out") {
    return (
      <SignIn
        notice={state.notice}
        onSignedIn={(key, current) => {
          storeKey(key);
          setState({ kind: "signed-in", current });
        }}
      />
    );
  }
  return (
    <Console
      current={state.current}
      onSignOut={() => {
        forgetKey();
        setState({ kind: "signed-out", notice: "Signed out." });
      }}
    />
  );
}

function Console({ current, onSignOut }: { current: CurrentKey; onSignOut: () => void }) {
  const route = useCurrentPage();
  // The menu is open on the page it was opened on: navigating closes it in the same render that
  // shows the next page, not in an effect after it (a reader of aria-expanded never sees it stale).
  const [menuOpenOn, setMenuOpenOn] = useState<string | undefined>(undefined);
  const menuOpen = menuOpenOn === route;
  const pages = availablePages();
  const entry = pages.find((p) => p.path === (route || DEFAULT_PAGE));

  useEffect(() => {
    if (!route) location.replace(href(DEFAULT_PAGE));
    document.title = `${entry?.title ?? "Not found"} · Model Gateway console`;
  }, [route, entry]);

  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: the skip link is a link to #main, as screen readers expect;
          the handler only moves focus inside the single-page app. */}
      <a class="skip" href="#main" onClick={skipToPage}>
        Skip to the page
      </a>
      <header class="topbar">
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="console-nav"
          onClick={() => setMenuOpenOn(menuOpen ? undefined : route)}
        >
          Menu
        </button>
        <span class="brand">Model Gateway</span>
        <span class="who">
          <span class="visually-hidden">Signed in with </span>
          <code title="The signed-in key">{current.label}</code>
          <span class="badge">{current.is_management_key ? "management key" : "key"}</span>
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav id="console-nav" aria-label="Console" class={menuOpen ? "open" : undefined}>
        <ul>
          {pages.map((p) => (
            <li key={p.path}>
              <a href={href(p.path)} aria-current={p === entry ? "page" : undefined}>
                {p.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {entry ? (
          <entry.page key={entry.path} current={current} />
        ) : (
          <section>
            <h1>Page not found</h1>
            <p>
              There is no page <code>#/{route}</code>. <a href={href(DEFAULT_PAGE)}>Go to the overview</a>.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}

/** The fragment names pages, so the skip link moves the focus itself instead of following `#main`. */
function skipToPage(event: Event): void {
  event.preventDefault();
  document.getElementById("main")?.focus();
}
