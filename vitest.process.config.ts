import { configDefaults, defineConfig } from 'vitest/config';
import base, { PROCESS_TESTS } from './vitest.config.js';

/** `npm run test:process`: the process-level tests `npm test` leaves out (vitest.config.ts), with the same emulators. */
export default defineConfig({
  ...base,
  test: { ...base.test, include: PROCESS_TESTS, exclude: configDefaults.exclude },
});
