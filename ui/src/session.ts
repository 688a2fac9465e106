/**
 * The API key of this browser tab: pasted once on the sign-in screen, kept in sessionStorage (gone
 * when the tab closes, never shared with other tabs, never in a URL, a cookie or a log).
 */
const STORAGE_NAME = "model-gateway.console.key";

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_NAME);
  } catch {
    // Storage disabled by the browser: the key lives as long as the page.
    return null;
  }
}

export function storeKey(key: string): void {
  try {
    sessionStorage.setItem(STORAGE_NAME, key);
  } catch {
    // See storedKey.
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_NAME);
  } catch {
    // See storedKey.
  }
}
