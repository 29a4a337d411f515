import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The store's own tests: what `npm run mutation` runs against each mutant of the transition code
 * (test/deps holds the dependency transitions' tests). The model-based tests run fewer random
 * sequences per mutant here, for time: 8 instead of 40, and 6 dependency seeds instead of 24.
 */
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/store/**/*.test.ts', 'test/deps/**/*.test.ts'],
    env: { ...base.test?.env, FENCEQ_MODEL_RUNS: '8', MODEL_SEEDS: '1000,8919,16838,24757,32676,40595' },
  },
});
