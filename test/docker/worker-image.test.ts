/**
 * The worker image (docker/worker/Dockerfile) as a process, no Docker daemon: its exact
 * ENTRYPOINT, CMD and ENV read from the Dockerfile, run on a staged /app (the packed package, the
 * handlers built to JavaScript), with the environment FargateWorkers gives the task. SIGTERM
 * releases every held lease; SIGKILL leaves them to expire and be taken over; a Spot-style
 * interruption finishes what fits in the grace, releases the rest, and an idle worker starts
 * those within a second.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORK_ENV } from '../../src/cli/commands/work.js';
import { IMAGE_APP_DIR, IMAGE_CLI, IMAGE_HEALTH_FILE } from '../../infra/worker-image.js';
import { endpoint, freshTable } from '../support/harness.js';
import { JobQueue } from '../../src/job-queue.js';
import { silentLogger } from '../../src/log.js';
import { readDockerfile, runImage, stageImage, ROOT, type Container, type Stage } from './image.js';

const stages = readDockerfile();
const final: Stage = stages.at(-1)!;
let app: string;
let remove: () => void;
const containers: Container[] = [];

beforeAll(() => {
  ({ app, remove } = stageImage(join(ROOT, 'test/docker/fixtures/handlers.ts')));
}, 60_000);

afterAll(() => {
  for (const c of containers) c.proc.signal('SIGKILL');
  remove?.();
});

async function table() {
  const t = await freshTable('fenceq-image');
  const queue = new JobQueue({ tableName: t.tableName, client: t.client, logger: silentLogger });
  // What FargateWorkers puts in the task definition (tests/infra/fargate-workers.test.ts), on the test table.
  const task = (extra: Record<string, string> = {}) => ({
    FENCEQ_TRANSPORT: 'dynamodb',
    FENCEQ_TABLE_NAME: t.tableName,
    FENCEQ_DYNAMODB_ENDPOINT: endpoint(),
    FENCEQ_QUEUES: 'quick,hold,gated',
    FENCEQ_MAX_POLL: '500ms',
    FENCEQ_CONCURRENCY: '4',
    FENCEQ_HEALTH_FILE: join(mkdtempSync(join(tmpdir(), 'fenceq-health-')), 'alive'),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    ...extra,
  });
  const start = (_name: string, extra: Record<string, string> = {}) => {
    const c = runImage(final, app, task(extra));
    containers.push(c);
    return c;
  };
  return { queue, start };
}

const claimed = (id: string) => (l: Record<string, any>) => l.event === 'worker.job_claimed' && l.id === id;

describe('the Dockerfile', () => {
  it('every stage FROM one exact Node LTS slim tag; the final stage runs as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s.from).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
    expect(final.user).toBeDefined();
    expect(['root', '0']).not.toContain(final.user);
  });

  it('the final stage: production env, the built CLI as entry point, `work` on the handlers built to .mjs; no TypeScript loader, no dev install', () => {
    expect(final.env.NODE_ENV).toBe('production');
    expect(final.workdir).toBe(IMAGE_APP_DIR);
    expect(final.entrypoint).toEqual(['node', IMAGE_CLI]);
    expect(final.cmd).toEqual(['work', '--handlers', `${IMAGE_APP_DIR}/handlers.mjs`]);
    expect(final.env.FENCEQ_HEALTH_FILE).toBe(IMAGE_HEALTH_FILE);
    expect(final.healthcheck).toEqual(['node', IMAGE_CLI, 'health', '--max-age', '60s']);
    const text = JSON.stringify(final.instructions);
    expect(text).not.toMatch(/tsx/);
    const deps = stages.find((s) => s.name === 'deps')!;
    expect(deps.instructions.find((i) => i.op === 'RUN')!.args).toMatch(/npm ci --omit=dev/);
    expect(existsSync(join(app, 'handlers.mjs'))).toBe(true);
  });
});

describe('the image as a process', () => {
  it('SIGTERM: stops claiming, and releases every held lease within the grace (FENCEQ_STOP_TIMEOUT); exit 0', async () => {
    const { queue, start } = await table();
    await queue.enqueueMany(['h1', 'h2', 'h3'].map((id) => ({ id, queue: 'hold', payload: null })));
    const w = start('a', { [WORK_ENV.stopTimeout]: '300ms' });
    for (const id of ['h1', 'h2', 'h3']) await w.next(claimed(id), `claim of ${id}`);
    w.proc.signal('SIGTERM');
    expect(await w.exited).toBe(0);
    const released = (await w.next((l) => l.event === 'worker.leases_released', 'leases released')).line;
    expect(released.count).toBe(3);
    for (const id of ['h1', 'h2', 'h3']) {
      const job = (await queue.get(id))!;
      expect(job).toMatchObject({ state: 'pending', settledBy: 'released', attempts: 0 });
      expect(job.leaseOwner).toBeUndefined();
    }
  }, 60_000);

  it('SIGKILL: the leases stay (running, unexpired) and are taken over by another worker only once they expire', async () => {
    const { queue, start } = await table();
    await queue.enqueueMany(['k1', 'k2'].map((id) => ({ id, queue: 'hold', payload: null })));
    const a = start('a', { [WORK_ENV.leaseTtl]: '2s' });
    for (const id of ['k1', 'k2']) await a.next(claimed(id), `claim of ${id}`);
    a.proc.signal('SIGKILL');
    await a.exited;
    const held = await Promise.all(['k1', 'k2'].map(async (id) => (await queue.get(id))!));
    for (const j of held) expect(j.state).toBe('running');
    // b ends up holding the two `hold` jobs: a short grace, so its own stop does not wait out the default 10 s.
    const b = start('b', { [WORK_ENV.leaseTtl]: '2s', [WORK_ENV.stopTimeout]: '100ms' });
    for (const j of held) {
      const { line } = await b.next(claimed(j.id), `takeover of ${j.id}`);
      expect(line.generation).toBe(j.leaseGeneration + 1);
      const now = (await queue.get(j.id))!;
      expect(now.leaseOwner).not.toBe(j.leaseOwner);
      expect(now.attempts).toBe(j.attempts + 1);
      // Fenced: the new lease began only after the old one ran out (the new expiry is a whole lifetime past it).
      expect(now.leaseExpiresAt! - 2_000).toBeGreaterThanOrEqual(j.leaseExpiresAt!);
    }
    const taken = b.lines
      .filter((l) => l.line.event === 'worker.orphan_taken_over')
      .map((l) => l.line.id)
      .sort();
    expect(taken).toEqual(['k1', 'k2']);
    b.proc.signal('SIGTERM');
    expect(await b.exited).toBe(0);
  }, 60_000);

  // The short job is held on a gate the test opens only once the worker is stopping, so it is
  // provably running at SIGTERM and finishes inside the grace however slow the machine (a job of
  // a fixed 300 ms used to finish before the SIGTERM while the second worker was still starting,
  // and then counted as neither drained nor released). The long job never ends by itself: it is
  // released when the grace runs out, which is why the grace is long enough to be sure of the
  // short job's wake-up and no longer.
  it('Spot interruption (SIGTERM, grace 5s): the running short job finishes in the grace, the long one is released at its end and an idle worker starts it in under a second', async () => {
    const { queue, start } = await table();
    const gate = join(mkdtempSync(join(tmpdir(), 'fenceq-gate-')), 'open');
    await queue.enqueueMany([
      { id: 'spot-short', queue: 'gated', payload: { gate } },
      { id: 'spot-long', queue: 'hold', payload: null },
    ]);
    const a = start('a', { [WORK_ENV.stopTimeout]: '5s' });
    await a.next(claimed('spot-long'), 'claim of spot-long');
    await a.next((l) => l.event === 'fixture.gate_waiting' && l.id === 'spot-short', 'spot-short running');
    const b = start('b', { [WORK_ENV.stopTimeout]: '100ms' }); // it ends up holding spot-long: its own stop need not wait
    await b.next((l) => l.event === 'worker.started', 'b started');
    a.proc.signal('SIGTERM');
    const stopping = (await a.next((l) => l.event === 'worker.stopping', 'a stopping')).line;
    expect(stopping.held).toBe(2);
    writeFileSync(gate, '');
    const completed = await a.next((l) => l.event === 'worker.job_completed' && l.id === 'spot-short', 'spot-short completed');
    const released = await a.next((l) => l.event === 'worker.leases_released', 'a released', 20_000);
    expect(released.line.ids).toEqual(['spot-long']);
    expect(a.lines.indexOf(completed)).toBeLessThan(a.lines.indexOf(released));
    const stopped = (await a.next((l) => l.event === 'worker.stopped', 'a stopped')).line;
    expect(stopped).toMatchObject({ drained: 1, abandoned: 1, released: 1, releaseFailures: 0 });
    expect((await queue.get('spot-short'))!.state).toBe('done');
    // From the job's release (a's lease.released line) to its claim by b, on the two processes'
    // own clocks (one machine clock): what the job waited, without this process's read delays.
    const release = (await a.next((l) => l.event === 'lease.released' && l.id === 'spot-long', 'release of spot-long')).line;
    const pickup = (await b.next(claimed('spot-long'), 'b claims spot-long', 10_000)).line;
    const waitedMs = Date.parse(pickup.time) - Date.parse(release.time);
    console.log(`spot: released job started elsewhere ${waitedMs} ms after its release`);
    expect(waitedMs).toBeLessThan(1_000);
    expect(await a.exited).toBe(0);
    b.proc.signal('SIGTERM');
    expect(await b.exited).toBe(0);
  }, 60_000);

  it('the health check: `fenceq health` (the HEALTHCHECK command) passes while the worker beats, fails once it is gone', async () => {
    const { start } = await table();
    const file = join(mkdtempSync(join(tmpdir(), 'fenceq-health-')), 'alive');
    const w = start('h', { FENCEQ_HEALTH_FILE: file });
    await w.next((l) => l.event === 'worker.started', 'started');
    const health = (env: Record<string, string>) =>
      runImage({ ...final, entrypoint: final.healthcheck!.slice(0, 2), cmd: final.healthcheck!.slice(2) }, app, env);
    const ok = health({ FENCEQ_HEALTH_FILE: file });
    expect(await ok.exited).toBe(0);
    w.proc.signal('SIGTERM');
    expect(await w.exited).toBe(0);
    const missing = health({ FENCEQ_HEALTH_FILE: join(file, '..', 'nothing-here') });
    expect(await missing.exited).toBe(1);
  }, 60_000);
});
