// ESLint (flat config, `npm run lint`, run by .ci/run): typescript-eslint's strict type-aware rules
// over every TypeScript file of tsconfig.json, the plain JavaScript rules over the .mjs/.js scripts.
// A rule that does not fit this codebase is turned off here with its reason, not disabled line by line.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'cdk.out/',
      '.cdk-home/',
      'reports/',
      'bench/results/',
      '.stryker-tmp/',
      'test/package/consumer/', // a consumer project, compiled against the packed package by consumer.sh
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A queue's bug classes stay errors as the preset has them: no-floating-promises,
      // no-misused-promises, await-thenable, return-await; plus every switch over a union exhaustive.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Rethrowing what a callee threw (`unknown`) and rejecting with an AbortSignal's reason are fine;
      // a literal or a plain object thrown or rejected is still an error.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // String() of a value of unknown type is how bad input is described back (narrowed to `{}`, which
      // the rule flags); restrict-template-expressions still refuses objects in messages.
      '@typescript-eslint/no-base-to-string': 'off',
      // `let x; ... () => x ...; x = build()`: a forward reference closed over before its assignment.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Numbers and booleans in messages and log lines are meant; objects, unknown and nullish still fail.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `_name` marks a parameter or element kept for its position.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `x!` after a lookup the line above proved present: the idiom under noUncheckedIndexedAccess.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `() => void doThing()` and `(x) => resolve(x)` are the house style for callbacks.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // Entry points re-check what their types already claim (JS callers, JSON events, CLI flags), and
      // loops re-read state an await may have changed: the rule calls both unnecessary.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Same reason: `Boolean(process.stdout.isTTY)` is undefined-safe although the type says boolean.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      // Handlers and store stubs implement async interfaces without awaiting anything.
      '@typescript-eslint/require-await': 'off',
      // `Promise<Json | void>` is the public Handler contract: a handler may return nothing.
      '@typescript-eslint/no-invalid-void-type': 'off',
      // Dropping undefined attributes before a write, and env keys in tests, is what delete is for.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // The Lambda stand-ins (scripts/lambda-shims) and test doubles replace classes of the SDK.
      '@typescript-eslint/no-extraneous-class': 'off',
      // The error base class declares its constructor to make `message` required.
      '@typescript-eslint/no-useless-constructor': 'off',
      // Helpers that hand back parsed JSON or cached entries typed by the caller.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // `string | 'projected'` names the literal callers test for.
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // A hoisted function declaration's handle on the instance.
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['self'] }],
    },
  },
  {
    // Commander hands each action its parsed options as `any`; each command declares their type.
    files: ['src/cli/program.ts'],
    rules: { '@typescript-eslint/no-unsafe-argument': 'off' },
  },
  {
    // Tests assert on parsed JSON (CLI output, synthesized templates, log lines): the expectation is
    // the check, and `any` is how they walk it. They also match ANSI escapes and JSON indentation.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off', // casts after toBeInstanceOf, stubs as literals
      '@typescript-eslint/only-throw-error': 'off', // rethrows what synthesis threw
      '@typescript-eslint/prefer-promise-reject-errors': 'off', // rejects with what a child process callback gave
      'no-control-regex': 'off',
      'no-regex-spaces': 'off',
    },
  },
  {
    // The worker fixture misuses promises on purpose: the tests check a worker process survives that.
    files: ['test/worker/fixtures/**'],
    rules: { '@typescript-eslint/no-misused-promises': 'off', '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    // The examples import `fenceq` through the package's exports, which point into dist/ (absent
    // before a build); CI compiles them with tsc after the build. Here: the rules without types.
    files: ['examples/**'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
