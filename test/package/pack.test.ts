import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

// What `npm pack` ships and what its modules pull in, checked on the built package (`pretest`
// builds dist/). test/package/consumer-run.ts installs the real tarball into a fresh project.

const ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
  exports: Record<string, string | { types: string; default: string }>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  bin: Record<string, string>;
  files: string[];
};

/** The files `npm pack` would put in the tarball (no prepack: dist/ is already built). */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path).sort();
}

/** The packages a module imports, following its relative imports (a bundle with every package external). */
async function packagesImportedBy(entry: string): Promise<{ static: Set<string>; dynamic: Set<string> }> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const found = { static: new Set<string>(), dynamic: new Set<string>() };
  for (const input of Object.values(result.metafile.inputs)) {
    for (const i of input.imports) {
      if (!i.external) continue;
      const name = i.path.startsWith('@') ? i.path.split('/').slice(0, 2).join('/') : i.path.split('/')[0]!;
      if (name.startsWith('node:') || builtinModules.includes(name)) continue;
      (i.kind === 'dynamic-import' ? found.dynamic : found.static).add(name);
    }
  }
  return found;
}

describe('the package', () => {
  let files: string[];
  beforeAll(() => {
    files = packedFiles();
  });

  it("ships only what a consumer needs: the built code, the bundles, the launcher, the worker image's Dockerfile, its .dockerignore and its build script, and the docs", () => {
    const allowed =
      /^(bin\/fenceq\.js|docker\/worker\/(Dockerfile|Dockerfile\.dockerignore|build-handlers\.mjs)|dist\/(src|functions|infra)\/.+\.(js|d\.ts|mjs)|dist\/lambda\/[a-z-]+\/(index|chunk-[\w-]+)\.mjs(\.map)?|package\.json|README\.md|LICENSE|CHANGELOG\.md)$/;
    expect(files.filter((f) => !allowed.test(f))).toEqual([]);
    for (const dir of ['test/', 'bench/', 'chaos/', '.ci/', 'scripts/', 'src/', 'examples/', 'node_modules/']) {
      expect(files.filter((f) => f.startsWith(dir))).toEqual([]);
    }
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'CHANGELOG.md', 'bin/fenceq.js', 'dist/lambda/api/index.mjs']));
  });

  it('a second `npm pack` does not pack the first tarball', () => {
    const tarball = join(ROOT, `fenceq-${pkg.version}.tgz`);
    writeFileSync(tarball, 'an earlier pack');
    try {
      expect(packedFiles().filter((f) => f.endsWith('.tgz'))).toEqual([]);
    } finally {
      rmSync(tarball, { force: true });
    }
  });

  it('every entry point of the exports map, and its types, is in the tarball', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './aws', './cdk', './limits', './package.json', './testing', './types']);
    for (const [name, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      expect(files, name).toContain(target.types.replace(/^\.\//, ''));
      expect(files, name).toContain(target.default.replace(/^\.\//, ''));
    }
    expect(files).toContain(pkg.bin.fenceq);
  });

  it('the published declarations import only dependencies and peers (no @types/aws-lambda, no devDependency)', () => {
    const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)]);
    const bad: string[] = [];
    for (const f of files.filter((f) => f.endsWith('.d.ts'))) {
      // Doc comments (@example blocks) import from fenceq itself; only code counts.
      const text = readFileSync(join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if (spec.startsWith('.') || spec.startsWith('node:')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!allowed.has(name)) bad.push(`${f}: ${spec}`);
        // Only fenceq/cdk's declarations may name the CDK.
        if ((name === 'aws-cdk-lib' || name === 'constructs') && !f.startsWith('dist/infra/')) bad.push(`${f}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("no entry point's declarations reach Powertools' types (they import aws-lambda, a package a consumer may not have)", () => {
    const reached = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      const text = readFileSync(join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) visit(join(file, '..', spec.replace(/\.js$/, '.d.ts')));
        else packages.add(spec);
      }
    };
    for (const target of Object.values(pkg.exports)) if (typeof target !== 'string') visit(target.types.replace(/^\.\//, ''));
    expect([...packages].filter((p) => p.startsWith('@aws-lambda-powertools/') || p === 'aws-lambda')).toEqual([]);
  });

  it('emulators, the CDK and the TypeScript loader are optional peers, never installed dependencies', () => {
    for (const name of ['dynalite', 'fauxqs', 'aws-cdk-lib', 'constructs', 'tsx']) {
      expect(pkg.dependencies, name).not.toHaveProperty(name);
      expect(pkg.peerDependencies, name).toHaveProperty(name);
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
    }
    // SDK ranges a consumer's own SDK can dedupe with.
    for (const [name, range] of Object.entries(pkg.dependencies)) expect(range, name).toMatch(/^\^/);
  });

  it('importing `fenceq` loads only the DynamoDB client packages; croner, the cron parser of schedules, on the first schedule operation', async () => {
    const root = await packagesImportedBy((pkg.exports['.'] as { default: string }).default);
    expect([...root.static].sort()).toEqual(['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/util-dynamodb']);
    expect([...root.dynamic]).toEqual(['croner']);
  });

  it('fenceq/aws needs no CDK, emulator or loader; fenceq/testing needs only dynalite beyond the SDK, in its child process', async () => {
    const aws = await packagesImportedBy('dist/src/aws/index.js');
    for (const name of ['aws-cdk-lib', 'constructs', 'dynalite', 'fauxqs', 'tsx', '@types/aws-lambda'])
      expect([...aws.static, ...aws.dynamic]).not.toContain(name);
    const testing = await packagesImportedBy('dist/src/testing/index.js');
    expect([...testing.static, ...testing.dynamic].filter((n) => !n.startsWith('@aws-sdk/') && n !== 'croner')).toEqual([]);
  });

  it('the CLI and the local stack load no CDK but for --enforce-iam; the TypeScript loader only on demand', async () => {
    const cli = await packagesImportedBy('dist/src/cli/main.js');
    for (const name of ['aws-cdk-lib', 'constructs', 'dynalite', 'fauxqs']) expect(cli.static, name).not.toContain(name);
    // `fenceq start --enforce-iam` synthesizes the stack for its policies: the CDK (and the IAM
    // evaluator) are imported then, on demand, never otherwise.
    expect([...cli.dynamic].filter((n) => !['tsx', 'aws-cdk-lib', 'constructs', '@cloud-copilot/iam-simulate', 'croner'].includes(n))).toEqual([]);
    expect(cli.static).not.toContain('tsx');
    expect(cli.dynamic).toContain('tsx');
  });

  it('carries the Apache-2.0 license text its package.json names', () => {
    const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(text).toContain('Apache License');
    expect(text).toContain('Version 2.0, January 2004');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
  });

  it('states the Node.js range its emulator chain runs on (require of ES modules: 20.19+ or 22.12+)', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
  });
});
