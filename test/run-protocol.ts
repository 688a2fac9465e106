import type { HookFailure } from "./support/suite.js";

/** The runner's messages to a worker process (test/run.ts → test/run-worker.ts): one file to run. */
export interface FileToRun {
  name: string;
  file: string;
}

/**
 * A worker's answer for one file: uvu's counts, the hooks that threw, the suites it made but never
 * ran, and what the file printed.
 */
export interface FileDone {
  name: string;
  seconds: number;
  total: number;
  passed: number;
  skipped: number;
  output: string;
  hookFailures: HookFailure[];
  /** Names of the suites the file made whose `run()` never ran them; each is one failure. */
  unrunSuites: string[];
}
