// Types of scripts/build-stamp.mjs, for the tests that import it.

/** One build step: the paths (relative to the root) it reads and writes, and how to run it. */
export interface BuildStep {
  readonly name: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly run: () => unknown;
}

/** Runs each step whose stamp in `stampFile` does not match its inputs and outputs (every step with `force`). */
export function buildStale(options: {
  readonly root: string;
  readonly stampFile: string;
  readonly steps: readonly BuildStep[];
  readonly force?: boolean;
}): Promise<{ built: string[]; upToDate: string[] }>;
