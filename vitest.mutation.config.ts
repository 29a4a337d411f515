import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The store's own tests: what `npm run mutation` runs against each mutant of the transition code.
 * The model-based test runs 8 random sequences per mutant here instead of 40, for time.
 */
export default defineConfig({
  test: { ...base.test, include: ['test/store/**/*.test.ts'], env: { ...base.test?.env, FENCEQ_MODEL_RUNS: '8' } },
});
