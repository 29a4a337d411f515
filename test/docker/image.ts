/**
 * The worker image without a Docker daemon: the final stage of docker/worker/Dockerfile read from
 * the file (ENV, WORKDIR, USER, ENTRYPOINT, CMD), and its /app laid out as the image holds it: the
 * package's packed files in node_modules/fenceq, the handlers built by the same script the build
 * stage runs. Its command line then runs as a process, with WORKDIR mapped to that folder.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { supervise, type Supervised } from '../../src/local/supervisor.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DOCKERFILE = join(ROOT, 'docker', 'worker', 'Dockerfile');

/** One stage of the Dockerfile. */
export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly env: Record<string, string>;
  readonly workdir: string;
  readonly user: string | undefined;
  readonly entrypoint: string[];
  readonly cmd: string[];
  readonly healthcheck: string[] | undefined;
  readonly instructions: readonly { op: string; args: string }[];
}

/** The Dockerfile's stages, in order (line continuations joined, comments dropped, build ARGs before FROM substituted). */
export function readDockerfile(text = readFileSync(DOCKERFILE, 'utf8')): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  let cur: { -readonly [K in keyof Stage]: Stage[K] } | undefined;
  const json = (s: string) => JSON.parse(s) as string[];
  for (const line of lines) {
    const [, op, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    const upper = op!.toUpperCase();
    if (upper === 'ARG' && !cur) {
      const [k, v] = args!.split('=');
      globalArgs[k!] = v ?? '';
      continue;
    }
    if (upper === 'FROM') {
      const [image, , name] = args!.replace(/\$\{(\w+)\}/g, (_, k: string) => globalArgs[k] ?? '').split(/\s+/);
      cur = { from: image!, name, env: {}, workdir: '/', user: undefined, entrypoint: [], cmd: [], healthcheck: undefined, instructions: [] };
      stages.push(cur);
      continue;
    }
    (cur!.instructions as { op: string; args: string }[]).push({ op: upper, args: args! });
    if (upper === 'ENV') for (const m of args!.matchAll(/(\w+)=(\S+)/g)) cur!.env[m[1]!] = m[2]!;
    if (upper === 'WORKDIR') cur!.workdir = args!;
    if (upper === 'USER') cur!.user = args!;
    if (upper === 'ENTRYPOINT') cur!.entrypoint = json(args!);
    if (upper === 'CMD') cur!.cmd = json(args!);
    if (upper === 'HEALTHCHECK') cur!.healthcheck = json(args!.slice(args!.indexOf('CMD') + 3).trim());
  }
  return stages;
}

/** The image's /app on disk: node_modules/fenceq with the packed files, and handlers.mjs built from `handlers`. */
export function stageImage(handlers: string): { app: string; remove: () => void } {
  // Inside the repository, so node_modules/fenceq finds its dependencies in the repository's
  // node_modules, as the image finds them in /app/node_modules.
  const base = join(ROOT, '.image-stage');
  mkdirSync(base, { recursive: true });
  const app = mkdtempSync(join(base, 'app-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })) as [
    { files: { path: string }[] },
  ];
  const pkg = join(app, 'node_modules', 'fenceq');
  for (const f of packed[0].files) {
    mkdirSync(dirname(join(pkg, f.path)), { recursive: true });
    cpSync(join(ROOT, f.path), join(pkg, f.path));
  }
  // The build stage's RUN: node node_modules/fenceq/docker/worker/build-handlers.mjs "$HANDLERS" /out/handlers.mjs (then /out/ is copied to /app).
  execFileSync(process.execPath, [join(pkg, 'docker', 'worker', 'build-handlers.mjs'), handlers, join(app, 'handlers.mjs')], { cwd: ROOT });
  return { app, remove: () => rmSync(app, { recursive: true, force: true }) };
}

/** A running container: its process (under the one supervisor) and its JSON log lines, each with the time it arrived. */
export interface Container {
  readonly proc: Supervised;
  readonly exited: Promise<number | null>;
  readonly lines: { at: number; line: Record<string, any> }[];
  /** Resolves with the first log line (arrival time and line) matching, already seen or to come. */
  next(match: (line: Record<string, any>) => boolean, what: string, timeoutMs?: number): Promise<{ at: number; line: Record<string, any> }>;
}

/** Runs the final stage's ENTRYPOINT + CMD with its ENV plus `env` (the task definition's), WORKDIR mapped to `app`. */
export function runImage(stage: Stage, app: string, env: Record<string, string>): Container {
  const map = (s: string) => (s.startsWith(`${stage.workdir}/`) ? join(app, s.slice(stage.workdir.length + 1)) : s);
  const [cmd, ...args] = [...stage.entrypoint, ...stage.cmd].map(map);
  const lines: Container['lines'] = [];
  const byText = new Map<string, Container['lines'][number]>(); // each line's entry, by its text
  const parse = (text: string) => (text.startsWith('{') ? (JSON.parse(text) as Record<string, any>) : undefined);
  const proc = supervise(cmd === 'node' ? process.execPath : cmd!, args, {
    name: `image ${stage.cmd.join(' ')}`,
    cwd: app,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...mapEnv(stage.env, map), ...env },
    stdin: 'ignore',
    lines: 'stderr',
    other: 'ignore',
    onLine: (text) => {
      const line = parse(text);
      if (!line) return;
      const entry = { at: performance.now(), line };
      lines.push(entry);
      if (!byText.has(text)) byText.set(text, entry);
    },
  });
  return {
    proc,
    exited: proc.exited.then((e) => e.code),
    lines,
    async next(match, what, timeoutMs = 20_000) {
      const seen = lines.find((l) => match(l.line));
      if (seen) return seen;
      // The entry onLine made of this very line (onLine runs before a waiter is answered).
      const text = await proc.waitForLine(
        (t) => {
          const line = parse(t);
          return line !== undefined && match(line);
        },
        { timeoutMs, what: `log line: ${what}` },
      );
      return byText.get(text)!;
    },
  };
}

function mapEnv(env: Record<string, string>, map: (s: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, map(v)]));
}
