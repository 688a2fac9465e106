/**
 * Spreads the start of new requests over event-loop turns, so a burst of thousands of new calls
 * cannot stall the streams already open. Node runs a request's handler, and every promise it
 * settles without waiting on I/O, before it reads the next socket; one turn of the loop reads all
 * sockets that are ready (up to 1,024 at once). A burst of new calls, each a few hundred µs of
 * work up to its upstream request, then fills one turn for hundreds of milliseconds, and every open
 * stream's next chunk waits behind it. The pacer lets requests start at once until the turn has
 * spent `budgetMs` on starting them; later ones wait, in arrival order, for the following turns, each
 * of which first relays what the open streams received meanwhile.
 */
export class StartPacer {
  private readonly waiting: (() => void)[] = [];
  /** When this turn's first request started; undefined between turns. */
  private turnStartedAt: number | undefined;
  private drainScheduled = false;

  /** `now` is the clock the budget is measured on (tests pass their own). */
  constructor(
    private readonly budgetMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `start` now, or in a later turn when this one has spent its budget. */
  start(start: () => void): void {
    if (this.waiting.length === 0 && this.withinBudget()) {
      start();
      return;
    }
    this.waiting.push(start);
    this.scheduleDrain();
  }

  /** Requests waiting for a turn now (the tests read it). */
  get queued(): number {
    return this.waiting.length;
  }

  private withinBudget(): boolean {
    const now = this.now();
    if (this.turnStartedAt === undefined) {
      this.turnStartedAt = now;
      // After this turn's I/O callbacks: the next turn starts with a fresh budget.
      setImmediate(() => (this.turnStartedAt = undefined));
      return true;
    }
    return now - this.turnStartedAt < this.budgetMs;
  }

  /** In the check phase, after this turn's I/O: a budget's worth of the waiting requests, then the next turn. */
  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      const startedAt = this.now();
      let start = this.waiting.shift();
      while (start) {
        start();
        if (this.now() - startedAt >= this.budgetMs) break;
        start = this.waiting.shift();
      }
      // Started by an immediate in this check phase, the next drain runs after the next turn's I/O.
      if (this.waiting.length > 0) this.scheduleDrain();
    });
  }
}
