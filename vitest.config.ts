import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The process-level tests: whole programs started as child processes (the local stack end to end,
 * the dashboard's stack, the worker image, the packed package, the chaos run). They take minutes,
 * so `npm test` leaves them to `npm run test:process` (vitest.process.config.ts), which CI runs too.
 */
export const PROCESS_TESTS = [
  'test/e2e/**/*.test.ts',
  'test/docker/**/*.test.ts',
  'test/package/**/*.test.ts',
  'test/chaos/chaos.test.ts',
  'test/ui/stack.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...PROCESS_TESTS],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', FENCEQ_LOG: 'silent' },
  },
});
