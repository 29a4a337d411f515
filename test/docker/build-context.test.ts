/**
 * The worker image's build context as Docker sends it for a manual build (`docker build -f
 * node_modules/fenceq/docker/worker/Dockerfile .` from a user's project): the files of the project
 * that docker/worker/Dockerfile.dockerignore (BuildKit's ignore file for that Dockerfile) does not
 * leave out, matched with Docker's own rules (the CDK's Docker ignore strategy). No node_modules is
 * sent, so none can be copied over the image's; and the build stage installs after it copies the
 * context, so one that is sent anyway is deleted by `npm ci`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { IgnoreStrategy } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { dockerignorePatterns, WORKER_DOCKERIGNORE } from '../../infra/worker-image.js';
import { DOCKERFILE, readDockerfile } from './image.js';

const project = mkdtempSync(join(tmpdir(), 'fenceq-build-context-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

const write = (rel: string) => {
  mkdirSync(dirname(join(project, rel)), { recursive: true });
  writeFileSync(join(project, rel), rel);
};

/** Every file under `dir`, relative to the project. */
function files(dir = project): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : [relative(project, join(dir, e.name)).split('\\').join('/')],
  );
}

/** What Docker sends: the files the ignore file's patterns do not match. */
function context(patterns: string[]): string[] {
  const ignore = IgnoreStrategy.docker(project, patterns);
  return files()
    .filter((f) => !ignore.ignores(join(project, f)))
    .sort();
}

describe('the manual build context', () => {
  it("BuildKit's ignore file for the Dockerfile is named after it, next to it", () => {
    expect(WORKER_DOCKERIGNORE).toBe(`${DOCKERFILE}.dockerignore`);
  });

  it('sends the sources, package.json and the lock file; no node_modules at any depth, no .git, no tool output', () => {
    const sources = ['package.json', 'package-lock.json', 'tsconfig.json', 'src/handlers.ts', 'src/lib/mail.ts', 'src/node_modules-notes.md', '.npmrc'];
    const left = [
      'node_modules/left-pad/index.js',
      'node_modules/.bin/esbuild',
      'node_modules/fenceq/docker/worker/Dockerfile',
      'node_modules/fenceq/dist/src/index.js',
      'packages/mail/node_modules/nodemailer/index.js',
      '.git/HEAD',
      'cdk.out/manifest.json',
      'infra/cdk.out/manifest.json',
      '.cdk-home/cache.json',
      '.fenceq/state.json',
      'npm-debug.log',
      'fenceq-0.1.0.tgz',
      'coverage/lcov.info',
    ];
    for (const f of [...sources, ...left]) write(f);
    const sent = context(dockerignorePatterns(readFileSync(WORKER_DOCKERIGNORE, 'utf8')));
    expect(sent).toEqual([...sources].sort());
    expect(sent.filter((f) => f.split('/').includes('node_modules'))).toEqual([]);
  });

  it('the build stage copies the context before it installs: npm ci deletes any node_modules the context brought', () => {
    const build = readDockerfile().find((s) => s.name === 'build')!;
    const ops = build.instructions.map((i) => `${i.op} ${i.args}`);
    const copyContext = ops.findIndex((o) => /^COPY (?!--from)/.test(o));
    const install = ops.findIndex((o) => /^RUN .*npm ci/.test(o));
    const buildHandlers = ops.findIndex((o) => /build-handlers\.mjs/.test(o));
    expect(copyContext).toBeGreaterThanOrEqual(0);
    expect(ops.filter((o) => /^COPY (?!--from)/.test(o))).toEqual(['COPY . .']);
    expect(install).toBeGreaterThan(copyContext);
    expect(buildHandlers).toBeGreaterThan(install);
  });
});
