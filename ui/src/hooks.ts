import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "./api.js";

/**
 * The two shapes of work a page does against the API: loading what it shows (`useLoad`, again
 * whenever its inputs change or `reload()` is called; a stale answer is dropped) and running an
 * action the user asked for (`useAction`: busy while it runs, its error kept to show).
 */
export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): void;
}

export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((previous) => ({ ...previous, loading: true }));
    load(controller.signal).then(
      (data) => controller.signal.aborted || setState({ data, loading: false }),
      (err: unknown) => controller.signal.aborted || setState({ error: messageOf(err), loading: false }),
    );
    return () => controller.abort();
    // `load` is a new closure every render: what it reads is listed in `inputs` instead.
  }, [...inputs, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action {
  busy: boolean;
  error: string | undefined;
  /** Runs `work` unless another run is in flight; resolves true when it succeeded. */
  run(work: () => Promise<unknown>): Promise<boolean>;
  clearError(): void;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const running = useRef(false);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    setError(undefined);
    try {
      await work();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clearError: useCallback(() => setError(undefined), []) };
}

/**
 * Calls `tick` every `intervalMs` while `active` holds (a batch still running, an intern still
 * booting), and stops when it no longer does or the page goes away.
 */
export function usePoll(tick: () => void, active: boolean, intervalMs = 2000): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => latest.current(), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
}
