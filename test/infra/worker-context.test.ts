/**
 * The worker image's build context: what FargateWorkers hashes (and copies into cdk.out) for the
 * image, on a project laid out as a user's. Tool output (CDK, the local stack, benches, mutation
 * runs) changes neither the asset hash nor what is copied; the project's own sources do.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FileSystem, IgnoreMode } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { WORKER_CONTEXT_EXCLUDE } from '../../infra/worker-image.js';

const project = mkdtempSync(join(tmpdir(), 'fenceq-context-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const write = (rel: string, text = rel) => {
  mkdirSync(dirname(join(project, rel)), { recursive: true });
  writeFileSync(join(project, rel), text);
};
// The options workerImageFromHandlers gives ContainerImage.fromAsset (the CDK hashes the context with them).
const hash = () => FileSystem.fingerprint(project, { exclude: [...WORKER_CONTEXT_EXCLUDE], ignoreMode: IgnoreMode.DOCKER });

describe("the worker image's build context", () => {
  it('ignores tool output and other packages; hashes the sources, the lock file and fenceq', () => {
    write('package.json', '{}');
    write('package-lock.json', '{}');
    write('src/handlers.ts');
    write('node_modules/fenceq/docker/worker/Dockerfile', 'FROM node');
    const before = hash();
    for (const out of [
      'reports/mutation/index.html',
      'bench/results/run.json',
      '.stryker-tmp/sandbox/x.ts',
      '.fenceq/state.json',
      '.cdk-home/cache.json',
      'cdk.out/manifest.json',
      'infra/cdk.out/manifest.json',
      '.image-stage/app-1/handlers.mjs',
      'coverage/lcov.info',
      'npm-debug.log',
      'fenceq-0.1.0.tgz',
      'node_modules/left-pad/index.js',
      '.git/HEAD',
    ])
      write(out);
    expect(hash()).toBe(before);
    // What the build stage copies does count: a source in a folder that shares a tool's name, fenceq itself, the handlers.
    for (const source of ['src/reports/daily.ts', 'node_modules/fenceq/dist/src/index.js', 'src/handlers.ts']) {
      const was = hash();
      write(source, `${source} changed`);
      expect(hash(), source).not.toBe(was);
    }
  });
});
