/**
 * The worker image's build context: what FargateWorkers hashes (and copies into cdk.out) for the
 * image, on a project laid out as a user's. Tool output (CDK, the local stack, benches, mutation
 * runs) and node_modules (the image installs its own from the lock file) change neither the asset
 * hash nor what is copied; the project's own sources, its lock file and fenceq's Dockerfile do.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { FileSystem, IgnoreMode } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { workerContextExclude } from '../../infra/worker-image.js';

const project = mkdtempSync(join(tmpdir(), 'fenceq-context-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const write = (rel: string, text = rel) => {
  mkdirSync(dirname(join(project, rel)), { recursive: true });
  writeFileSync(join(project, rel), text);
};
const DOCKERFILE = 'node_modules/fenceq/docker/worker/Dockerfile';
// The options workerImageFromHandlers gives ContainerImage.fromAsset (the CDK hashes and stages the context with them).
const options = { exclude: workerContextExclude(DOCKERFILE), ignoreMode: IgnoreMode.DOCKER };
const hash = () => FileSystem.fingerprint(project, options);

describe("the worker image's build context", () => {
  it("ignores tool output and node_modules; hashes the sources, the lock file and fenceq's Dockerfile", () => {
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
      'node_modules/fenceq/dist/src/index.js',
      '.git/HEAD',
    ])
      write(out);
    expect(hash()).toBe(before);
    // What the build uses does count: a source in a folder that shares a tool's name, the lock file, the Dockerfile, the handlers.
    for (const source of ['src/reports/daily.ts', 'package-lock.json', DOCKERFILE, 'src/handlers.ts']) {
      const was = hash();
      write(source, `${source} changed`);
      expect(hash(), source).not.toBe(was);
    }
  });

  it('the staged copy (what `docker build` runs on) holds the Dockerfile and its ignore file, and no other node_modules file', () => {
    write('node_modules/fenceq/docker/worker/Dockerfile.dockerignore', '**/node_modules');
    write('node_modules/fenceq/docker/worker/build-handlers.mjs');
    write('node_modules/left-pad/index.js');
    const staged = join(project, '..', `${basename(project)}-staged`);
    try {
      FileSystem.copyDirectory(project, staged, options);
      expect(existsSync(join(staged, DOCKERFILE))).toBe(true);
      expect(existsSync(join(staged, `${DOCKERFILE}.dockerignore`))).toBe(true);
      expect(existsSync(join(staged, 'node_modules/fenceq/docker/worker/build-handlers.mjs'))).toBe(false);
      expect(existsSync(join(staged, 'node_modules/left-pad/index.js'))).toBe(false);
      expect(existsSync(join(staged, 'src/handlers.ts'))).toBe(true);
    } finally {
      rmSync(staged, { recursive: true, force: true });
    }
  });
});
