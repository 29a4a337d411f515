/**
 * The consumer test: fenceq as a team installs it. Packs the repo (`npm pack`, which builds),
 * installs the tarball into empty projects with the npm registry only (the npm cache first), and:
 *   - checks the install pulls no emulator or TypeScript loader;
 *   - compiles a consumer of every entry point (strict; NodeNext and bundler resolution; no
 *     skipLibCheck) with the worker example (examples/worker) and runs it against fenceq/testing;
 *   - synthesizes the example's CDK app: fenceq's functions from the package's bundles, the
 *     user's worker bundled from their entry;
 *   - runs `npx fenceq --version`, `npx fenceq start` (first without the emulators: one line and a
 *     non-zero exit; then the demo to its end; then --no-demo up, used, and down by SIGTERM to npx
 *     with no process left);
 *   - runs `npx fenceq work` with a .ts handlers file in a CommonJS project (first without a
 *     loader: one line naming the fix; then with tsx) and stops it with SIGTERM to npx.
 * Every process it starts goes through the one supervisor (src/local/supervisor.ts): each has a
 * timeout, and a failure names the process.
 * Usage: npm run test:consumer   (CI: from .ci/run, after the build; FENCEQ_KEEP_CONSUMER=1 keeps the temp dir)
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToEnd, supervise, type ChildRun, type Supervised } from '../../src/local/supervisor.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HERE = join(ROOT, 'test/package/consumer');
const STARTED = Date.now();
const WORK = mkdtempSync(join(process.env.TMPDIR ?? tmpdir(), 'fenceq-consumer.'));
const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' };
const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
const background: Supervised[] = [];

/** The consumer test's own failure: what it expected, and what it saw. */
class ConsumerTestError extends Error {
  override name = 'ConsumerTestError';
}

const step = (what: string) => console.log(`== consumer: ${what}`);
function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new ConsumerTestError(what);
}

/** Runs a command to its end (10 minutes at most: installs from a cold cache are slow); a non-zero exit fails the test unless `mayFail`. */
async function run(command: string, args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; mayFail?: boolean } = {}): Promise<ChildRun> {
  const out = await runToEnd(command, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? BASE_ENV, timeoutMs: 600_000 });
  if (!opts.mayFail && out.exit.code !== 0) {
    throw new ConsumerTestError(
      `${command} ${args.join(' ')} exited ${out.exit.code ?? out.exit.signal}:\n${out.stdout.slice(-2000)}\n${out.stderr.slice(-2000)}`,
    );
  }
  return out;
}

/** `npx --no-install fenceq ...` in `cwd`. */
const fenceq = (cwd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; mayFail?: boolean } = {}) =>
  run('npx', ['--no-install', 'fenceq', ...args], { cwd, ...opts });

/** The exact version this repo's lock file has of a package, so the install hits the npm cache. */
function locked(pkg: string): string {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const version = lock.packages[`node_modules/${pkg}`]?.version;
  check(version !== undefined, `package-lock.json has no ${pkg}`);
  return `${pkg}@${version}`;
}

/** Processes (other than `ps` itself) whose command line mentions the temp dir. */
async function leftovers(): Promise<string[]> {
  const ps = await run('ps', ['-eo', 'pid,args']);
  return ps.stdout.split('\n').filter((l) => l.includes(WORK) && !l.includes('ps -eo'));
}

/** Waits (60 s at most) until `ok` holds: for other processes' ends, which send no event to this one. */
async function waitUntil(what: string, ok: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok())) {
    check(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
const noLeftovers = async () => (await leftovers()).length === 0;

async function main(): Promise<void> {
  step('npm pack');
  const packed = await run('npm', ['pack', '--pack-destination', WORK, '--silent']);
  const tarball = join(WORK, packed.stdout.trim().split('\n').pop() ?? '');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  check(existsSync(tarball), 'npm pack made no tarball');

  step('install into an empty ESM project (no emulators, no loader)');
  const app = join(WORK, 'app');
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), '{ "name": "consumer-app", "version": "1.0.0", "private": true, "type": "module" }\n');
  await run('npm', [...NPM_INSTALL, tarball, ...['typescript', '@types/node', 'aws-cdk-lib', 'constructs', 'esbuild'].map(locked)], { cwd: app });
  for (const pkg of ['dynalite', 'fauxqs', 'tsx', 'classic-level']) check(!existsSync(join(app, 'node_modules', pkg)), `installing fenceq pulled ${pkg}`);

  step('npx fenceq --version');
  const v = (await fenceq(app, ['--version'])).stdout.trim();
  check(v === version, `fenceq --version is ${v}, not ${version}`);

  step('npx fenceq start --no-demo without the emulators: one line, non-zero exit, nothing left');
  const bare = await fenceq(app, ['start', '--no-demo'], { mayFail: true });
  const said = (bare.stdout + bare.stderr).trimEnd();
  check(bare.exit.code !== 0, 'start without emulators exited 0');
  check(said.split('\n').length === 1, `start without emulators printed more than one line: ${said}`);
  check(said.includes('npm i -D dynalite fauxqs'), `start without emulators did not say what to install: ${said}`);
  check(await noLeftovers(), `start without emulators left processes: ${(await leftovers()).join('\n')}`);

  step('npm i -D dynalite fauxqs');
  await run('npm', [...NPM_INSTALL, '-D', locked('dynalite'), locked('fauxqs')], { cwd: app });

  step('compile a consumer of every entry point (strict; NodeNext and bundler) with the worker example');
  mkdirSync(join(app, 'worker'));
  for (const f of readdirSync(join(ROOT, 'examples/worker')).filter((f) => f.endsWith('.ts'))) cpSync(join(ROOT, 'examples/worker', f), join(app, 'worker', f));
  for (const f of ['consumer.ts', 'tsconfig.nodenext.json', 'tsconfig.bundler.json']) cpSync(join(HERE, f), join(app, f));
  await run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.nodenext.json'], { cwd: app });
  await run('npx', ['--no-install', 'tsc', '-p', 'tsconfig.bundler.json'], { cwd: app });

  step('run it against fenceq/testing');
  const result = (await run('node', ['build/consumer.js'], { cwd: app, env: { ...BASE_ENV, FENCEQ_LOG: 'silent' } })).stdout.trim();
  check(result === '{"ok":true,"result":{"sent":"ada@example.com","attempt":1}}', `consumer printed ${result}`);
  check(await noLeftovers(), `fenceq/testing left processes: ${(await leftovers()).join('\n')}`);

  step("synthesize the example's CDK app (the construct with the user's own worker entry)");
  await run('node', ['build/worker/app.js'], { cwd: app, env: { ...BASE_ENV, CDK_OUTDIR: join(app, 'cdk.out') } });
  checkTemplate(app);

  step("npx fenceq start: the demo from the package (its worker processes run the package's bin)");
  const demo = await fenceq(app, ['start', '--jobs', '10', '--duration', '2s', '--workers', '2'], { mayFail: true });
  const demoOut = demo.stdout + demo.stderr;
  check(demo.exit.code === 0, `the demo failed: ${demoOut.slice(-1000)}`);
  check(demoOut.includes('Every job ended where it should'), `the demo did not end well: ${demoOut.slice(-1000)}`);
  await waitUntil('no process of the demo left', noLeftovers);

  step('npx fenceq start --no-demo: up, used, down by SIGTERM to npx');
  const stack = supervise('npx', ['--no-install', 'fenceq', '--json', 'start', '--no-demo'], {
    cwd: app,
    env: BASE_ENV,
    stdin: 'ignore',
    other: 'ignore',
    name: 'fenceq start --no-demo',
  });
  background.push(stack);
  const ready = JSON.parse(await stack.waitForLine((l) => l.includes('"event":"stack.ready"'), { timeoutMs: 60_000, what: 'stack.ready' })) as {
    env: Record<string, string>;
    pids: Record<string, number>;
  };
  const stackEnv = { ...BASE_ENV, ...ready.env };
  await fenceq(app, ['--json', 'stats'], { env: stackEnv });

  step('npx fenceq work with a .ts handlers file in a CommonJS project');
  const cjs = join(WORK, 'cjs');
  mkdirSync(cjs);
  writeFileSync(join(cjs, 'package.json'), '{ "name": "consumer-cjs", "version": "1.0.0" }\n'); // npm init -y: CommonJS
  await run('npm', [...NPM_INSTALL, tarball], { cwd: cjs });
  cpSync(join(HERE, 'cjs-handlers.ts'), join(cjs, 'handlers.ts'));
  if (!(process.features as { typescript?: unknown }).typescript) {
    const noLoader = await fenceq(cjs, ['work', '--handlers', 'handlers.ts'], { env: stackEnv, mayFail: true });
    const out = (noLoader.stdout + noLoader.stderr).trimEnd();
    check(noLoader.exit.code === 2, `work with a .ts file and no loader exited ${noLoader.exit.code}: ${out}`);
    check(
      out ===
        'fenceq: cannot load --handlers handlers.ts: a TypeScript handlers file needs a loader: run `npm i -D tsx` (or compile it to .js, or use Node.js 22.18 or later)',
      `work with a .ts file and no loader said: ${out}`,
    );
  }
  await run('npm', [...NPM_INSTALL, '-D', locked('tsx')], { cwd: cjs });
  const worker = supervise('npx', ['--no-install', 'fenceq', 'work', '--handlers', 'handlers.ts', '--poll', '100ms'], {
    cwd: cjs,
    env: { ...stackEnv, FENCEQ_LOG: 'silent' },
    stdin: 'ignore',
    other: 'ignore',
    name: 'fenceq work (CommonJS project)',
  });
  background.push(worker);
  await fenceq(cjs, ['enqueue', 'shout', '{"text":"hello"}', '--id', 'cjs-1'], { env: stackEnv });
  const job = async () => JSON.parse((await fenceq(cjs, ['--json', 'get', 'cjs-1'], { env: stackEnv })).stdout) as { state: string; result?: unknown };
  await waitUntil("the CommonJS project's .ts handler to finish its job", async () => (await job()).state === 'done');
  const finished = await job();
  check(JSON.stringify(finished.result) === '{"shouted":"HELLO"}', `the job's result is not the handler's: ${JSON.stringify(finished.result)}`);
  await worker.stop({ signal: 'SIGTERM', timeoutMs: 30_000 });
  await waitUntil('the worker to exit', async () => !(await leftovers()).some((l) => l.includes('fenceq work --handlers handlers.ts')));

  step('stop the local stack: SIGTERM to npx, no process left');
  await stack.stop({ signal: 'SIGTERM', timeoutMs: 30_000 });
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await waitUntil('the emulators to exit', () => !Object.values(ready.pids).some(alive));
  await waitUntil('no process of the consumer projects left', noLeftovers);
  console.log(`consumer test passed in ${Math.round((Date.now() - STARTED) / 1000)}s`);
}

/** The synthesized app: 5 functions, each with its bundle; the user's worker holds their handlers; fenceq's API is the package's bundle, byte for byte. */
function checkTemplate(app: string): void {
  interface Fn {
    Type: string;
    Properties: { Code: { S3Key: string }; Description?: string };
  }
  const template = JSON.parse(readFileSync(join(app, 'cdk.out/MyJobs.template.json'), 'utf8')) as { Resources: Record<string, Fn> };
  const fns = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
  check(fns.length === 5, `expected 5 functions (enqueue, api, admin, reclaim, worker), found ${fns.length}`);
  const bundle = (f: Fn) => join(app, 'cdk.out', `asset.${f.Properties.Code.S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
  for (const f of fns) check(existsSync(bundle(f)), `no bundle in ${dirname(bundle(f))}`);
  const worker = fns.find((f) => f.Properties.Description === 'fenceq Lambda worker');
  check(
    worker !== undefined && readFileSync(bundle(worker), 'utf8').includes('payload.to must be an email address'),
    'the worker bundle does not hold the user handlers',
  );
  const api = fns.find((f) => String(f.Properties.Description).startsWith('fenceq API'));
  check(
    api !== undefined && readFileSync(bundle(api)).equals(readFileSync(join(app, 'node_modules/fenceq/dist/lambda/api/index.mjs'))),
    'the API function is not the pre-bundled one',
  );
}

try {
  await main();
} catch (err) {
  console.error(`consumer test FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await Promise.all(background.map((p) => p.stop({ signal: 'SIGTERM', timeoutMs: 10_000 }).catch(() => undefined)));
  if (process.env.FENCEQ_KEEP_CONSUMER) console.log(`kept ${WORK}`);
  else rmSync(WORK, { recursive: true, force: true });
}
