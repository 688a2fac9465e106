/**
 * The one loop that tries a call's planned endpoints in turn: live calls (InferenceCall), batch
 * items (server/services/batches/batch-item-runner.ts) and video hand-overs
 * (server/services/videos/video-submission.ts) all go through it, and differ only by their
 * {@link AttemptPolicy}.
 *
 * The rules every user shares: a pooled key's failure may be retried on another key of the same
 * pool first (KeyPools.afterFailure decides, once after a 429 or a refused key, once after a
 * server failure), then a retryable failure moves on to the next endpoint, and a non-retryable
 * one, a failure of the gateway's own (not an UpstreamError) or an aborted call ends the loop.
 * The key that answered is told so (a refused key it probed takes calls again).
 *
 * @module
 */
import { UpstreamError, type UpstreamTarget } from "../providers/provider.js";
import type { KeyChoice, KeyPools } from "../key-pools/key-pools.js";
import type { CallerContext } from "./caller-context.js";
import type { CatalogEndpoint } from "../catalog/catalog.js";
import type { ResolvedTarget, TargetResolver } from "./upstream-targets.js";
import { isRetryable } from "./upstream-errors.js";

/**
 * How one caller's loop behaves. A live call is its own policy (no object per call); the others
 * pass a small literal.
 */
export interface AttemptPolicy<A extends EndpointAttempt = EndpointAttempt> {
  /**
   * The call's choice of pooled keys (affinity, keys tried). Without one a pooled provider gives its
   * first key and a key's failure is not retried on another: a video job polled later must find
   * the key that made it.
   */
  readonly keyChoice: KeyChoice | undefined;
  /** An aborted call tries nothing more; its failure ends the loop. */
  readonly signal: AbortSignal | undefined;
  /** The attempt's target is known and it is about to be sent (a span opens, a job moves to the endpoint). */
  sending?(attempt: A, resolved: ResolvedTarget): void | Promise<void>;
  /** An attempt failed; `next` is the attempt the loop goes on with (the same endpoint on another key), if any. */
  failed?(failure: FailedAttempt<A>, next: A | undefined): void;
}

/** One try: an endpoint (and, for a routed call, the model it serves: routing.ts's Attempt). */
export interface EndpointAttempt {
  endpoint: CatalogEndpoint;
}

/** The attempt that answered. */
export interface Served<T, A extends EndpointAttempt = EndpointAttempt> {
  value: T;
  attempt: A;
  isByok: boolean;
  /** The pooled key that answered, when its provider has a pool. */
  pooled: ResolvedTarget["pooled"];
  startedAt: number;
  /** Milliseconds from sending the attempt to its first answer byte (whole answer when not streamed). */
  latencyMs: number;
}

/** The attempt that failed last: the loop's outcome when no endpoint answered. */
export interface FailedAttempt<A extends EndpointAttempt = EndpointAttempt> {
  /** An UpstreamError, or the gateway's own failure (which ends the loop at once). */
  error: unknown;
  attempt: A;
  isByok: boolean;
  pooled: ResolvedTarget["pooled"];
  startedAt: number;
}

/** The engine parts the loop needs. */
export interface AttemptDeps {
  resolveTarget: TargetResolver;
  keyPools: Pick<KeyPools, "afterFailure" | "succeeded">;
}

/**
 * Runs `run` against the planned endpoints until one answers. Resolves with the answer, or with the
 * last failure (never rejects for a failed attempt: the caller maps it as its API says); `undefined`
 * when there was no endpoint to try.
 */
export async function tryEndpoints<A extends EndpointAttempt, T>(
  deps: AttemptDeps,
  context: CallerContext,
  attempts: readonly A[],
  run: (target: UpstreamTarget, attempt: A) => Promise<T>,
  policy: AttemptPolicy<A>,
): Promise<Served<T, A> | FailedAttempt<A> | undefined> {
  let index = 0;
  while (index < attempts.length) {
    const attempt = attempts[index]!;
    const startedAt = performance.now();
    let isByok = false;
    let pooled: ResolvedTarget["pooled"];
    try {
      const resolved = await deps.resolveTarget(context, attempt.endpoint, policy.keyChoice);
      ({ isByok, pooled } = resolved);
      // Awaited only when the hook is asynchronous: a live call's is not, and pays no extra turn.
      const sending = policy.sending?.(attempt, resolved);
      if (sending) await sending;
      const value = await run(resolved.target, attempt);
      if (pooled) deps.keyPools.succeeded(pooled.pool, pooled.key);
      return { value, attempt, isByok, pooled, startedAt, latencyMs: Math.round(performance.now() - startedAt) };
    } catch (error) {
      const failure: FailedAttempt<A> = { error, attempt, isByok, pooled, startedAt };
      const aborted = policy.signal?.aborted === true;
      if (!(error instanceof UpstreamError) || aborted) {
        policy.failed?.(failure, undefined);
        return failure;
      }
      const anotherKey =
        pooled !== undefined &&
        policy.keyChoice !== undefined &&
        deps.keyPools.afterFailure(pooled.pool, pooled.key, error, policy.keyChoice);
      const next = anotherKey ? attempt : isRetryable(error) ? attempts[index + 1] : undefined;
      policy.failed?.(failure, next);
      if (next === undefined) return failure;
      if (!anotherKey) index += 1;
    }
  }
  return undefined;
}

/** Whether the loop's outcome is an answer. */
export function isServed<T, A extends EndpointAttempt>(
  outcome: Served<T, A> | FailedAttempt<A>,
): outcome is Served<T, A> {
  return "value" in outcome;
}
