/**
 * Docs that run. Every shell block of README.md and docs/*.md runs (bash, in a temp folder, with
 * `fenceq` on PATH as the built bin/fenceq.js, `npx fenceq` read as `fenceq`, and a fresh table on
 * the test emulators in FENCEQ_TABLE_NAME / FENCEQ_DYNAMODB_ENDPOINT) and must exit 0, or
 * non-zero when marked `fail`. A block marked `aws`, `docker` or `long` (a server, a worker, the
 * test suite, a bench run, an install) is not run: each of its commands is checked instead (every
 * `fenceq` subcommand and flag exists in its `--help`, every `npm run` script exists, every
 * environment name given to fenceq is one fenceq reads, every repo path exists, and every
 * `node_modules/fenceq/...` path is shipped). Every TypeScript block compiles against the built
 * package (one tsc for all), unless marked `fragment`. Markers: `<!-- docs-test: KIND -->` on the
 * line before the fence, or words after the language (```sh aws).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ENV } from '../../src/aws/config.js';
import { runToEnd } from '../../src/local/supervisor.js';
import { freshTable } from '../support/harness.js';
import { BIN, ROOT, cli } from '../cli/support.js';
import { blocksOf, docFiles, isShell, isTypeScript, simpleCommands, type DocBlock, type SimpleCommand } from './blocks.js';

const CHECKED = ['aws', 'docker', 'long'];
const KINDS = new Set([...CHECKED, 'fail', 'fragment']);
const blocks = docFiles(ROOT).flatMap((f) => blocksOf(ROOT, f));
const shell = blocks.filter(isShell);
const typescript = blocks.filter(isTypeScript);
const where = (b: DocBlock) => `${b.file}:${b.line}`;

const TMP = join(ROOT, 'test/docs', `.tmp-${randomBytes(4).toString('hex')}`);
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

describe('docs: markers', () => {
  it('every marker is one the test knows', () => {
    const unknown = blocks.flatMap((b) => [...b.kinds].filter((k) => !KINDS.has(k)).map((k) => `${where(b)}: ${k}`));
    expect(unknown).toEqual([]);
  });
});

describe('docs: shell blocks run', () => {
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    const bin = join(TMP, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'fenceq'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    const t = await freshTable('fenceq-docs');
    env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      FENCEQ_LOG: 'silent',
      AWS_REGION: 'us-east-1',
      [ENV.tableName]: t.tableName,
      [ENV.dynamodbEndpoint]: inject('dynamodbEndpoint'),
      [ENV.sqsEndpoint]: inject('sqsEndpoint'),
    };
  });

  const runnable = shell.filter((b) => !CHECKED.some((k) => b.kinds.has(k)));
  it.each(runnable.map((b) => [where(b), b] as const))('%s exits as the text says', async (_, b) => {
    // Only fenceq and a few harmless commands run: an `npm ci` or `npm start` here would act on
    // the checkout itself (npm finds the repo's package.json above the temp folder).
    const unsafe = simpleCommands(b.code).filter((c) => !runsHere(c));
    expect(unsafe.map((c) => `${c.text}: mark the block long, aws or docker`)).toEqual([]);
    const cwd = join(TMP, `run-${b.line}`);
    mkdirSync(cwd, { recursive: true });
    const code = b.code.replace(/\bnpx fenceq\b/g, 'fenceq');
    const run = await bash(`set -e\n${code}`, cwd, env, 20_000);
    if (b.kinds.has('fail')) expect(run.code, run.output).not.toBe(0);
    else expect(run.code, run.output).toBe(0);
  });
});

describe('docs: blocks that are not run are checked', () => {
  const checked = shell.filter((b) => CHECKED.some((k) => b.kinds.has(k)));
  it.each(checked.map((b) => [where(b), b] as const))('%s names only fenceq commands, flags, scripts, env names and paths that exist', async (_, b) => {
    const problems: string[] = [];
    for (const c of simpleCommands(b.code)) problems.push(...(await check(c)).map((p) => `${c.text}: ${p}`));
    expect(problems).toEqual([]);
  });
});

describe('docs: every repo path named in a shell block exists', () => {
  it.each(shell.map((b) => [where(b), b] as const))('%s', (_, b) => {
    expect(simpleCommands(b.code).flatMap((c) => pathProblems(c.words))).toEqual([]);
  });
});

describe('docs: TypeScript blocks compile against the package', () => {
  it('every ts block, with tsc --noEmit, strict, against the built d.ts of fenceq, fenceq/aws, fenceq/cdk, fenceq/testing', async () => {
    const dir = join(TMP, 'ts');
    mkdirSync(dir, { recursive: true });
    const files = new Map<string, DocBlock>();
    typescript
      .filter((b) => !b.kinds.has('fragment'))
      .forEach((b) => {
        const name = `${b.file.replace(/[/.]/g, '-')}-${b.line}.ts`;
        files.set(name, b);
        writeFileSync(join(dir, name), `${b.code}\nexport {};\n`);
      });
    writeFileSync(join(dir, 'stand-ins.d.ts'), STAND_INS);
    // The handlers file the docs' lambda.ts and app.ts import.
    writeFileSync(join(dir, 'handlers.ts'), "import type { Handler } from 'fenceq';\nexport const handlers: Record<string, Handler> = {};\n");
    const dist = (p: string) => [join(ROOT, 'dist', p)];
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          paths: {
            fenceq: dist('src/index.d.ts'),
            'fenceq/aws': dist('src/aws/index.d.ts'),
            'fenceq/cdk': dist('infra/index.d.ts'),
            'fenceq/testing': dist('src/testing/index.d.ts'),
          },
        },
        include: ['*.ts'],
      }),
    );
    const run = await spawnToEnd(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], ROOT, process.env, 55_000);
    // Name each error by the block it came from.
    const errors = run.output
      .split('\n')
      .filter((l) => /error TS/.test(l))
      .map((l) => l.replace(/^([^(]+)\((\d+),\d+\)/, (_, f: string, n: string) => `${where(files.get(f.split('/').pop()!)!)} +${Number(n)}`));
    expect(errors).toEqual([]);
    expect(run.code, run.output).toBe(0);
  }, 60_000);
});

describe('docs: what fenceq prints points at what the package ships', () => {
  it('the start banner names no file outside the package', () => {
    const source = readFileSync(join(ROOT, 'src/cli/commands/start.ts'), 'utf8');
    const banner = source.slice(source.indexOf('function readyText'), source.indexOf('function stackLogger'));
    const paths = [...banner.matchAll(/\b((?:examples|docs|src|test|infra|functions|scripts|tools|node_modules\/fenceq)\/[\w./-]*)/g)].map((m) => m[1]!);
    expect(paths.filter((p) => !shipped(p.replace(/^node_modules\/fenceq\//, '')))).toEqual([]);
  });
});

/**
 * Names the docs' TypeScript uses for the reader's own code (what a handler sends, where it
 * writes): declared here once, so the blocks read as the reader's code would.
 */
const STAND_INS = `
declare const queue: import('fenceq').JobQueue;
declare function send(payload: unknown): Promise<{ sent: boolean }>;
declare function resize(payload: unknown, signal: AbortSignal): Promise<{ key: string }>;
declare const handlers: Record<string, import('fenceq').Handler>;
declare function sendEmail(payload: unknown, opts?: { signal?: AbortSignal }): Promise<void>;
`;

// ---- checks of a command that is not run ----

/** Commands an unmarked block may run: fenceq itself and a few that read or print. */
function runsHere(c: SimpleCommand): boolean {
  const [cmd, arg] = c.words;
  return cmd === 'fenceq' || (cmd === 'npx' && arg === 'fenceq') || ['echo', 'cat', 'export', 'ls', 'test', 'true'].includes(cmd ?? '');
}

const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; files: string[] };
/** Environment names any process takes, besides fenceq's own. */
const STANDARD_ENV = /^(AWS_[A-Z_]+|NODE_[A-Z_]+|PATH|HOME|CI)$/;

async function check(c: SimpleCommand): Promise<string[]> {
  const [cmd, ...args] = c.words;
  if (cmd === 'npx' && args[0] === 'fenceq') return fenceqProblems(c.env, args.slice(1));
  if (cmd === 'fenceq') return fenceqProblems(c.env, args);
  if (cmd === 'node' && args[0] === 'bin/fenceq.js') return fenceqProblems(c.env, args.slice(1));
  if (cmd === 'npm' && args[0] === 'start') return fenceqProblems(c.env, ['start', ...args.slice(args.indexOf('--') + 1 || args.length)]);
  if (cmd === 'npm' && args[0] === 'run') return args[1] && PKG.scripts[args[1]] ? [] : [`no npm script ${args[1]}`];
  if (cmd === 'npm' && args[0] === 'test') return PKG.scripts.test ? [] : ['no npm script test'];
  return [];
}

const help = new Map<string, Promise<Help>>();
interface Help {
  readonly options: Map<string, boolean>;
  readonly commands: Set<string>;
}

/** The options (and whether each takes a value) and subcommands `fenceq PATH --help` lists. */
function helpOf(path: readonly string[]): Promise<Help> {
  const key = path.join(' ');
  let h = help.get(key);
  if (!h) {
    h = cli([...path, '--help']).then((run) => {
      const options = new Map<string, boolean>();
      const commands = new Set<string>();
      let section = '';
      for (const line of run.stdout.split('\n')) {
        if (/^\S.*:$/.test(line)) section = line;
        const opt = /^\s+(?:(-\w), )?(--[\w-]+)( [<[])?/.exec(line);
        if (section === 'Options:' && opt) {
          options.set(opt[2]!, opt[3] !== undefined);
          if (opt[1]) options.set(opt[1], opt[3] !== undefined);
        }
        const sub = /^ {2}([a-z][\w-]*)\b/.exec(line);
        if (section === 'Commands:' && sub) commands.add(sub[1]!);
      }
      return { options, commands };
    });
    help.set(key, h);
  }
  return h;
}

/** Whether `fenceq ARGS` names a subcommand and flags that exist, with env names fenceq reads. */
async function fenceqProblems(env: Readonly<Record<string, string>>, args: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  const root = await helpOf([]);
  const known = await knownEnv();
  for (const name of Object.keys(env)) if (!known.has(name) && !STANDARD_ENV.test(name)) problems.push(`fenceq reads no environment variable ${name}`);
  const path: string[] = [];
  let here = root;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('-')) {
      const flag = a.split('=')[0]!;
      const takes = here.options.get(flag) ?? root.options.get(flag);
      if (takes === undefined) problems.push(`fenceq ${path.join(' ')} has no option ${flag}`);
      else if (takes && !a.includes('=')) i++;
    } else if (here.commands.size > 0) {
      if (!here.commands.has(a)) {
        problems.push(`fenceq ${path.join(' ')} has no command ${a}`);
        break;
      }
      path.push(a);
      here = await helpOf(path);
    }
  }
  return problems;
}

let envNames: Promise<Set<string>> | undefined;
/** Every FENCEQ_* name the CLI's help mentions, and the names the functions read. */
function knownEnv(): Promise<Set<string>> {
  envNames ??= (async () => {
    const names = new Set<string>(Object.values(ENV));
    const root = await helpOf([]);
    for (const path of [[], ...[...root.commands].map((c) => [c])]) {
      const run = await cli([...path, '--help']);
      for (const m of run.stdout.matchAll(/\bFENCEQ_[A-Z_]+\b/g)) names.add(m[0]);
    }
    return names;
  })();
  return envNames;
}

const REPO_DIRS = /^(?:\.\/)?((?:src|docs|test|infra|functions|docker|examples|bench|chaos|tools|scripts|bin)\/[\w./-]*)$/;

/** Repo paths (and paths under node_modules/fenceq/) a command names that are missing or not shipped. */
function pathProblems(words: readonly string[]): string[] {
  const problems: string[] = [];
  words.forEach((w, i) => {
    const value = w.includes('=') && w.startsWith('-') ? w.split('=').slice(1).join('=') : w;
    const inPackage = /^node_modules\/fenceq\/(.+)$/.exec(value);
    if (inPackage) {
      if (!existsSync(join(ROOT, inPackage[1]!)) || !shipped(inPackage[1]!)) problems.push(`${value}: not in the package`);
      return;
    }
    const m = REPO_DIRS.exec(value);
    if (!m) return;
    // An output file (`--out FILE`) need not exist; its folder must.
    const p = words[i - 1] === '--out' ? m[1]!.replace(/\/[^/]*$/, '') : m[1]!;
    if (!existsSync(join(ROOT, p))) problems.push(`${value}: no such path in the repo`);
  });
  return problems;
}

/** Whether the package's `files` (or npm's always-shipped files) include a repo-relative path. */
function shipped(path: string): boolean {
  if (['README.md', 'LICENSE', 'package.json', 'CHANGELOG.md'].includes(path)) return true;
  return PKG.files.filter((f) => !f.startsWith('!')).some((f) => path === f.replace(/\/$/, '') || path.startsWith(f.endsWith('/') ? f : `${f}/`));
}

// ---- processes ----

interface Ran {
  readonly code: number | null;
  readonly output: string;
}

/** Runs a process to its end under the one supervisor (its group killed past `timeoutMs`). */
async function spawnToEnd(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  const run = await runToEnd(cmd, args, { name: `docs: ${cmd}`, cwd, env, timeoutMs });
  return { code: run.exit.code, output: run.stdout + run.stderr };
}

function bash(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Ran> {
  return spawnToEnd('bash', ['-c', script], cwd, env, timeoutMs);
}
