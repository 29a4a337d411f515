import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { IgnoreMode } from 'aws-cdk-lib';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { ContainerImage } from 'aws-cdk-lib/aws-ecs';
import { ValidationError } from '../src/errors.js';
import { PACKAGE_ROOT } from './job-function.js';

/** Where the worker image's files are inside it: WORKDIR of docker/worker/Dockerfile. */
export const IMAGE_APP_DIR = '/app';

/** The built CLI inside the image (the health check runs it). */
export const IMAGE_CLI = `${IMAGE_APP_DIR}/node_modules/fenceq/bin/fenceq.js`;

/** Where `fenceq work` in the image writes its heartbeat (FENCEQ_HEALTH_FILE); `fenceq health` reads it. */
export const IMAGE_HEALTH_FILE = '/tmp/fenceq-worker.alive';

/** The ignore file of fenceq's worker Dockerfile (BuildKit reads `<Dockerfile>.dockerignore` next to it): the one list of what the build context leaves out. */
export const WORKER_DOCKERIGNORE = join(PACKAGE_ROOT, 'docker', 'worker', 'Dockerfile.dockerignore');

/** The patterns of a `.dockerignore` text, as Docker reads them: one a line, trimmed; blank lines and `#` comments dropped. */
export function dockerignorePatterns(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * What FargateWorkers leaves out of the image's build context, in `.dockerignore` syntax (rooted
 * at the project; a project's own `.dockerignore` is read too and comes first): the patterns of
 * {@link WORKER_DOCKERIGNORE}, so the asset the CDK hashes and stages holds what `docker build`
 * would send, but for the Dockerfile at `dockerfile` (relative to the project, inside
 * node_modules) and its ignore file, which the build names by path. Tool output (CDK, the local
 * stack, benches, mutation runs, packs) would otherwise change the asset's hash, and so the image,
 * whenever that tool ran.
 */
export function workerContextExclude(dockerfile: string): string[] {
  return [...dockerignorePatterns(readFileSync(WORKER_DOCKERIGNORE, 'utf8')), `!${dockerfile}`, `!${dockerfile}.dockerignore`];
}

/** fenceq's worker Dockerfile, inside the installed package. */
function workerDockerfile(): string {
  return join(PACKAGE_ROOT, 'docker', 'worker', 'Dockerfile');
}

/** The nearest directory at or above `from` holding a package.json. */
function projectOf(from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The worker image built at synth from your project with fenceq's Dockerfile: the build context
 * is your project (its package.json and lock file list fenceq and esbuild), `handlers` is built to
 * JavaScript in the build stage, and the final stage holds production dependencies only. The
 * context leaves out {@link workerContextExclude}.
 */
export function workerImageFromHandlers(handlers: string, projectDir: string | undefined, platform: Platform): ContainerImage {
  const file = resolve(handlers);
  if (!existsSync(file)) throw new ValidationError('props.handlers', handlers, 'no such file');
  const project = projectDir === undefined ? projectOf(dirname(file)) : resolve(projectDir);
  if (project === undefined || !existsSync(join(project, 'package.json'))) {
    throw new ValidationError('props.projectDir', projectDir ?? handlers, 'the image is built from a project directory holding package.json and its lock file');
  }
  const rel = (p: string) => relative(project, p).split('\\').join('/');
  const inside = (p: string) => !rel(p).startsWith('..') && !isAbsolute(rel(p));
  if (!inside(file)) throw new ValidationError('props.handlers', handlers, `must be inside the project directory ${project}`);
  const dockerfile = workerDockerfile();
  if (!inside(dockerfile)) {
    throw new ValidationError(
      'props.projectDir',
      project,
      `fenceq must be installed in the project (its Dockerfile is at ${dockerfile}); or build your own image and pass props.image`,
    );
  }
  return ContainerImage.fromAsset(project, {
    file: rel(dockerfile),
    buildArgs: { HANDLERS: rel(file) },
    platform,
    // Docker's own rules (rooted patterns, `**` for any depth): what Docker itself leaves out of
    // the context, and the syntax of the project's .dockerignore, which the CDK reads in.
    ignoreMode: IgnoreMode.DOCKER,
    exclude: workerContextExclude(rel(dockerfile)),
  });
}
