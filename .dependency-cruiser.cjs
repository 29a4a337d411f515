// The layer order of fenceq, written once: a module may import its own layer and the layers
// below it, never one above; folders grouped in one layer (siblings) never import each other.
// `npx depcruise src functions infra tools bench chaos` (in .ci/run) fails on an upward import, a
// sibling import or an import cycle. Bottom first.
/** @type {[name: string, paths: string[]][]} */
const LAYERS = [
  ['core types', ['^src/(job|errors|schema|keys|log|retry-policy|validate|client-config|dynamo-clients|flow-limits|type-guards|tracing)\\.ts$']],
  // The store, bottom first: the lease read path's memory (pure), the write helpers and item
  // codec, the shard layout, single-item job transitions, the lease read path, flow control,
  // the composite transitions (settle, batch enqueue, the lease plan), schedules, maintenance.
  ['store: memory', ['^src/store/memory/']],
  ['store: core', ['^src/store/core/']],
  ['store: layout', ['^src/store/layout/']],
  ['store: jobs', ['^src/store/jobs/']],
  ['store: lease', ['^src/store/lease/']],
  ['store: flow', ['^src/store/flow/']],
  ['store: deps', ['^src/store/deps/']],
  ['store: plans', ['^src/store/plans/']],
  ['store: schedules', ['^src/store/schedules/']],
  ['store: maintenance', ['^src/store/maintenance/']],
  ['queue parts', ['^src/(job-store|schedules|wait-for|types)\\.ts$']],
  ['views', ['^src/views/']],
  ['queue facade', ['^src/job-queue\\.ts$']],
  ['worker', ['^src/worker/']],
  ['fencing, text', ['^src/fencing/', '^src/text/']],
  ['aws', ['^src/aws/']],
  ['functions', ['^functions/']],
  ['infra', ['^infra/']],
  ['local stack, dashboard', ['^src/local/', '^src/ui/']],
  ['testing', ['^src/testing/']],
  ['cli, entry point', ['^src/cli/', '^src/(index|public-types|limits)\\.ts$']],
  ['bench and chaos harness', ['^tools/']],
  ['bench, chaos', ['^bench/', '^chaos/']],
];

const either = (paths) => paths.map((p) => `(${p})`).join('|');

/** One rule per layer: nothing in it imports a layer above it. */
const upward = LAYERS.slice(0, -1).map(([name, paths], i) => ({
  name: `layer-upward: ${name}`,
  comment: `${name} imports only itself and the layers below it (${
    LAYERS.slice(0, i)
      .map(([n]) => n)
      .join(', ') || 'none'
  })`,
  severity: 'error',
  from: { path: either(paths) },
  to: { path: either(LAYERS.slice(i + 1).flatMap(([, p]) => p)) },
}));

/** Sibling folders of one layer never import each other, so no folder cycle can form inside a layer. */
const siblings = LAYERS.filter(([, paths]) => paths.length > 1).flatMap(([name, paths]) =>
  paths.map((p) => ({
    name: `layer-sibling: ${name}`,
    comment: `${p} does not import its siblings in the layer "${name}"`,
    severity: 'error',
    from: { path: p },
    to: { path: either(paths.filter((q) => q !== p)) },
  })),
);

module.exports = {
  forbidden: [
    ...upward,
    ...siblings,
    {
      name: 'in-a-layer',
      comment: 'every module of src, functions, infra, tools, bench and chaos belongs to a layer above (LAYERS)',
      severity: 'error',
      from: { path: '^(src|functions|infra|tools|bench|chaos)/', pathNot: either(LAYERS.flatMap(([, p]) => p)) },
      to: {},
    },
    {
      name: 'no-cycle',
      comment: 'no import cycle between modules (type-only imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'example-handlers-only-in-the-example-worker',
      comment: "the example handlers are the example worker's (functions/worker.ts); nothing else deploys or names them",
      severity: 'error',
      from: { pathNot: '^functions/worker\\.ts$' },
      to: { path: '^functions/example-handlers\\.ts$' },
    },
    {
      name: 'no-unresolvable',
      comment: 'every relative import resolves to a file',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, path: '^\\.' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|test|examples|scripts)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.json'],
    },
  },
};
