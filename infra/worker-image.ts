import { existsSync } from 'node:fs';
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

/**
 * What the worker image's build context leaves out, in `.dockerignore` syntax (rooted at the
 * project; a project's own `.dockerignore` is read too and comes first). The build stage needs
 * package.json, the lock file and the handlers with what they import; everything else here is
 * output of some tool (CDK, the local stack, benches, mutation runs, packs), which would otherwise
 * be copied into the asset and change its hash, and so the image, whenever that tool ran.
 * node_modules goes (the image installs its own) but for fenceq, whose Dockerfile the build names.
 */
export const WORKER_CONTEXT_EXCLUDE: readonly string[] = [
  '.git',
  '**/cdk.out',
  '**/.cdk-home',
  '**/.fenceq',
  '**/.stryker-tmp',
  '**/.image-stage',
  '**/*.log',
  '*.tgz',
  'reports',
  'coverage',
  'bench/results',
  'node_modules/*',
  '!node_modules/fenceq',
];

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
 * context leaves out {@link WORKER_CONTEXT_EXCLUDE}.
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
    exclude: [...WORKER_CONTEXT_EXCLUDE],
  });
}
