import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** The store's own tests: what `npm run mutation` runs against each mutant of the transition code. */
export default defineConfig({ test: { ...base.test, include: ['test/store/**/*.test.ts'] } });
