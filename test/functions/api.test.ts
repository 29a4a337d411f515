import { beforeAll, describe, expect, it } from 'vitest';
import type { InvokeReply } from '../../src/aws/errors.js';
import { FenceqError } from '../../src/errors.js';
import type { Lease } from '../../src/job.js';
import type { LeaseResult } from '../../src/job-store.js';
import { bodies, coldStart, drain, freshSqsQueue, handlerEnv } from '../aws/support.js';
import { freshTable, rawAccess } from '../support/harness.js';
import { iamHarness, IAM_ENFORCED, type IamHarness } from '../support/iam.js';

type Handler = (event: unknown) => Promise<InvokeReply>;

let enq: Handler;
let api: Handler;
let admin: Handler;
let wakeUrl: string;
let raw: ReturnType<typeof rawAccess>;
let iam: IamHarness;

beforeAll(async () => {
  const table = await freshTable();
  raw = rawAccess(table.doc, table.tableName);
  wakeUrl = await freshSqsQueue('wake');
  // Each function runs under the policy its role has in the synthesized template (IAM proxy).
  iam = await iamHarness({ tableName: table.tableName, queueUrls: { wake: wakeUrl } });
  const env = (principal: string) => handlerEnv(table.tableName, { FENCEQ_WAKE_QUEUE_URL: wakeUrl, ...iam.env(principal) });
  enq = (await coldStart(() => import('../../functions/enqueue.js'), env('enqueue'))).handler;
  api = (await coldStart(() => import('../../functions/api.js'), env('api'))).handler;
  admin = (await coldStart(() => import('../../functions/admin.js'), env('admin'))).handler;
});

/** Unwraps an ok reply, failing the test with the error otherwise. */
function value<T>(reply: InvokeReply): T {
  if (!reply.ok) throw new Error(`expected ok, got ${JSON.stringify(reply.error)}`);
  return reply.value as T;
}

describe('functions/api: direct invokes', () => {
  it('enqueues, leases and acks a job through the API', async () => {
    const created = value<{ outcome: string; id: string }>(await enq({ op: 'enqueue', job: { queue: 'mail', payload: { to: 'a@b' }, id: 'api-1' } }));
    expect(created).toMatchObject({ outcome: 'created', id: 'api-1' });

    const leases = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['mail'], ttlMs: 10_000 } })).leases;
    expect(leases).toHaveLength(1);
    expect(leases[0]).toMatchObject({ id: 'api-1', owner: 'w1', payload: { to: 'a@b' }, attempt: 1 });

    const renewed = value<{ outcome: string; lease: Lease }>(await api({ op: 'renew', lease: leases[0], ttlMs: 20_000 }));
    expect(renewed.outcome).toBe('renewed');
    expect(renewed.lease.generation).toBe(leases[0]!.generation);

    const done = value<{ outcome: string; repeated: boolean }>(await api({ op: 'ackDone', lease: renewed.lease, result: { sent: true } }));
    expect(done).toMatchObject({ outcome: 'done', repeated: false });

    const job = value<{ state: string; result: unknown }>(await admin({ op: 'get', id: 'api-1' }));
    expect(job).toMatchObject({ state: 'done', result: { sent: true } });
    await drain(wakeUrl);
  });

  it('answers a stale ack through the API as a no-op that leaves the new holder alone', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'mail', payload: 1, id: 'api-stale' } }));
    const [a] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'worker-a', queues: ['mail'], ttlMs: 10_000 } })).leases;
    // An operator force-releases A's lease; B leases the job again.
    expect(value<{ outcome: string }>(await admin({ op: 'releaseUnowned', id: 'api-stale' })).outcome).toBe('released');
    const [b] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'worker-b', queues: ['mail'], ttlMs: 10_000 } })).leases;
    expect(b!.generation).toBeGreaterThan(a!.generation);

    const stale = value<{ outcome: string; currentGeneration: number; currentState: string }>(await api({ op: 'ackDone', lease: a, result: 'from A' }));
    expect(stale).toEqual({ outcome: 'stale', id: 'api-stale', generation: a!.generation, currentGeneration: b!.generation, currentState: 'running' });
    const staleFail = value<{ outcome: string }>(await api({ op: 'ackFailed', lease: a, error: 'A gave up' }));
    expect(staleFail.outcome).toBe('stale');

    expect(value<{ state: string; leaseOwner: string }>(await admin({ op: 'get', id: 'api-stale' }))).toMatchObject({
      state: 'running',
      leaseOwner: 'worker-b',
    });
    expect(value<{ outcome: string }>(await api({ op: 'ackDone', lease: b, result: 'from B' })).outcome).toBe('done');
    expect(value<{ result: unknown }>(await admin({ op: 'get', id: 'api-stale' })).result).toBe('from B');
    await drain(wakeUrl);
  });

  it('batches wake-ups: a message per queue per window, never one per job', async () => {
    await drain(wakeUrl, 2);
    const t0 = Date.now();
    const jobs = Array.from({ length: 60 }, (_, i) => ({ queue: i % 3 === 0 ? 'sms' : 'mail', payload: i }));
    const outcomes = value<{ outcome: string }[]>(await enq({ op: 'enqueueMany', jobs }));
    expect(outcomes).toHaveLength(60);
    expect(outcomes.every((o) => o.outcome === 'created')).toBe(true);
    // The handler flushed before it returned: both queues' wake-ups are on the queue already.
    const first = bodies(await drain(wakeUrl));
    expect(new Set(first.map((b) => b.queue))).toEqual(new Set(['mail', 'sms']));

    // A burst of single enqueues, one invocation each.
    for (let i = 0; i < 20; i++) value(await enq({ op: 'enqueue', job: { queue: 'mail', payload: `burst-${i}` } }));
    const elapsed = Date.now() - t0;
    const all = [...first, ...bodies(await drain(wakeUrl, 3))];
    const count = (q: string) => all.filter((b) => b.queue === q).length;
    // One message when the window opens, then at most one per one-second window (sent delayed to the window's end).
    const windows = 1 + Math.ceil(elapsed / 1000);
    expect(count('mail')).toBeGreaterThanOrEqual(1);
    expect(count('mail')).toBeLessThanOrEqual(windows);
    expect(count('sms')).toBeLessThanOrEqual(windows);
    expect(count('mail')).toBeLessThan(10); // 60 jobs: far from one message per job
    expect(all.every((b) => Object.keys(b).join() === 'queue')).toBe(true);
  });

  it('wakes the queue when a job is released back to pending', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'reports', payload: null, id: 'api-rel' } }));
    const [l] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w1', queues: ['reports'], ttlMs: 10_000 } })).leases;
    await drain(wakeUrl, 2); // the enqueue's (and any delayed) wake-up
    const out = value<{ outcome: string }>(await api({ op: 'release', lease: l, options: { reason: 'shutting down' } }));
    expect(out.outcome).toBe('released');
    expect(bodies(await drain(wakeUrl, 2))).toEqual([{ queue: 'reports' }]);
  });
});

describe('functions/api: bad events are refused with a typed error and nothing written', () => {
  const validLease = {
    id: 'x-1',
    generation: 5,
    secret: 'ab'.repeat(16),
    incarnation: '0123456789abcdef',
    owner: 'w',
    queue: 'bad',
    expiresAt: 1,
    attempt: 1,
    maxAttempts: 3,
    payload: null,
  };
  const { secret: _secret, ...noSecret } = validLease;
  const deep = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const tooDeep = '(a value nested more than 67 levels deep)';
  const cases: [string, unknown, string, unknown][] = [
    ['no event', null, 'event', null],
    ['an array', [], 'event', []],
    ['unknown operation', { op: 'dropTable' }, 'op', 'dropTable'],
    ['missing operation', { job: {} }, 'op', undefined],
    ['operation of the admin function', { op: 'cancel', id: 'x' }, 'op', 'cancel'],
    ['operation of the enqueue function', { op: 'get', id: 'x' }, 'op', 'get'],
    ['missing job', { op: 'enqueue' }, 'job', undefined],
    ['unknown argument', { op: 'enqueue', job: { queue: 'bad', payload: 1 }, priority: 3 }, 'priority', 3],
    ['unknown job field', { op: 'enqueue', job: { queue: 'bad', payload: 1, delay: 5 } }, 'job.delay', 5],
    ['bad queue name', { op: 'enqueue', job: { queue: 'no spaces', payload: 1 } }, 'job.queue', 'no spaces'],
    ['missing payload', { op: 'enqueue', job: { queue: 'bad' } }, 'job.payload', undefined],
    ['wrong priority type', { op: 'enqueue', job: { queue: 'bad', payload: 1, priority: 'high' } }, 'job.priority', 'high'],
    [
      'one bad job in a batch',
      {
        op: 'enqueueMany',
        jobs: [
          { queue: 'bad', payload: 1, id: 'ok-1' },
          { queue: 'bad', payload: 1, maxAttempts: 0 },
        ],
      },
      'jobs[1].maxAttempts',
      0,
    ],
    ['jobs not an array', { op: 'enqueueMany', jobs: { queue: 'bad' } }, 'jobs', { queue: 'bad' }],
    ['lease ttl too short', { op: 'lease', lease: { owner: 'w', queues: ['bad'], ttlMs: 5 } }, 'lease.ttlMs', 5],
    ['lease max too large', { op: 'lease', lease: { owner: 'w', queues: ['bad'], ttlMs: 5000, max: 1000 } }, 'lease.max', 1000],
    ['forged lease', { op: 'ackDone', lease: { ...validLease, incarnation: 'nope' } }, 'lease.incarnation', 'nope'],
    ['renew without ttl', { op: 'renew', lease: validLease }, 'ttlMs', undefined],
    ['retryable not a boolean', { op: 'ackFailed', lease: validLease, error: 'x', options: { retryable: 'no' } }, 'options.retryable', 'no'],
    ['lease without its secret', { op: 'ackDone', lease: noSecret }, 'lease.secret', undefined],
    ['100,000-deep payload', { op: 'enqueue', job: { queue: 'bad', payload: deep(100_000), id: 'deep-1' } }, 'job.payload', tooDeep],
    [
      '100,000-deep payload in a batch',
      {
        op: 'enqueueMany',
        jobs: [
          { queue: 'bad', payload: 1, id: 'ok-2' },
          { queue: 'bad', payload: deep(100_000) },
        ],
      },
      'jobs[1].payload',
      tooDeep,
    ],
    ['100,000-deep error', { op: 'ackFailed', lease: validLease, error: deep(100_000) }, 'error', tooDeep],
    ['65-deep payload', { op: 'enqueue', job: { queue: 'bad', payload: deep(65), id: 'deep-2' } }, 'job.payload', '(a value nested more than 64 levels deep)'],
    [
      "a schedule tick's id (reserved)",
      { op: 'enqueue', job: { queue: 'bad', payload: 1, id: 'sched:nightly:1777600860000' } },
      'job.id',
      'sched:nightly:1777600860000',
    ],
    [
      "a schedule tick's id in a batch",
      {
        op: 'enqueueMany',
        jobs: [
          { queue: 'bad', payload: 1, id: 'ok-3' },
          { queue: 'bad', payload: 1, id: 'ok-4' },
          { queue: 'bad', payload: 1 },
          { queue: 'bad', payload: 1, id: 'sched:nightly:1777600920000' },
        ],
      },
      'jobs[3].id',
      'sched:nightly:1777600920000',
    ],
  ];

  it.each(cases)('%s', async (_what, event, field, badValue) => {
    // Enqueue events go to the enqueue function (the API function refuses them: see below).
    const op = (event as { op?: unknown } | null)?.op;
    const reply = await (op === 'enqueue' || op === 'enqueueMany' ? enq : api)(event);
    expect(reply.ok).toBe(false);
    if (reply.ok) return;
    expect(reply.error.name).toBe('ValidationError');
    expect(reply.error.field).toBe(field);
    expect(reply.error.value).toEqual(badValue);
    expect(reply.error.message).toContain(field);
  });

  it('refuses an oversize payload and an oversize result', async () => {
    const big = 'x'.repeat(70 * 1024);
    const reply = await enq({ op: 'enqueue', job: { queue: 'bad', payload: { big }, id: 'too-big' } });
    expect(reply).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'job.payload' } });
    // The reply echoes the refused value cut short, not 70 KiB of it.
    expect(JSON.stringify(reply).length).toBeLessThan(3000);
    const ack = await api({ op: 'ackDone', lease: validLease, result: big });
    expect(ack).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'result' } });
  });

  it('wrote nothing for any of them: no job, no queue registered, no wake-up', async () => {
    await drain(wakeUrl, 2);
    for (const e of cases) await api(e[1]);
    for (const id of ['ok-1', 'ok-2', 'ok-3', 'ok-4', 'sched:nightly:1777600860000', 'sched:nightly:1777600920000', 'too-big', 'x-1', 'deep-1', 'deep-2'])
      expect(await raw.get(id)).toBeUndefined();
    const stats = value<{ queue: string }[]>(await admin({ op: 'stats' }));
    expect(stats.map((s) => s.queue)).not.toContain('bad');
    expect(await drain(wakeUrl, 1)).toEqual([]);
  });
});

describe("functions/api: failures that are not the caller's", () => {
  it('throws (a function error Lambda counts) when the table cannot be reached, instead of replying ok: false', async () => {
    const down = (await coldStart(() => import('../../functions/api.js'), handlerEnv('fenceq-unreachable', { FENCEQ_DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' })))
      .handler;
    // The SDK's connection error itself (after its retries), not one of fenceq's typed errors that become replies.
    const err = await down({ op: 'lease', lease: { owner: 'w', queues: ['mail'], ttlMs: 5000 } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(FenceqError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED' });
    // Bad input is still answered without touching the table.
    expect(await down({ op: 'lease' })).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'lease' } });
  });
});

describe('functions/enqueue and functions/api serve their own principal only', () => {
  it('the enqueue function refuses every lease-held and operator operation; the API refuses enqueue', async () => {
    for (const op of ['lease', 'ackDone', 'ackFailed', 'renew', 'release', 'cancel', 'releaseUnowned', 'requeueDead', 'runNow', 'list', 'stats', 'purgeDead']) {
      expect(await enq({ op }), op).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op', value: op } });
    }
    for (const op of ['enqueue', 'enqueueMany', 'get', 'cancel', 'releaseUnowned', 'requeueDead', 'runNow']) {
      expect(await api({ op }), op).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op', value: op } });
    }
  });
});

describe('functions/admin', () => {
  it('refuses unknown operations and bad ids, and reports a missing job by class', async () => {
    expect(await admin({ op: 'lease', lease: {} })).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'op', value: 'lease' } });
    expect(await admin({ op: 'cancel', id: '~queues' })).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'id', value: '~queues' } });
    expect(await admin({ op: 'list', list: { queue: 'mail', state: 'done' } })).toMatchObject({
      ok: false,
      error: { name: 'ValidationError', field: 'state' },
    });
    expect(await admin({ op: 'stats', queues: 'mail' })).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'queues' } });
    expect(await admin({ op: 'requeueDead', id: 'nobody' })).toMatchObject({ ok: false, error: { name: 'JobNotFoundError', jobId: 'nobody' } });
  });

  it('cancels, requeues only dead jobs, lists and inspects', async () => {
    value(await enq({ op: 'enqueue', job: { queue: 'ops', payload: 1, id: 'adm-1' } }));
    expect(await admin({ op: 'requeueDead', id: 'adm-1' })).toMatchObject({
      ok: false,
      error: { name: 'InvalidStateError', jobId: 'adm-1', state: 'pending' },
    });
    const page = value<{ jobs: { id: string }[] }>(await admin({ op: 'list', list: { queue: 'ops', state: 'pending' } }));
    expect(page.jobs.map((j) => j.id)).toEqual(['adm-1']);
    expect(value<{ outcome: string }>(await admin({ op: 'cancel', id: 'adm-1' })).outcome).toBe('cancelled');
    expect(value<{ state: string }>(await admin({ op: 'inspect', id: 'adm-1' })).state).toBe('cancelled');
    expect(value(await admin({ op: 'get', id: 'nothing-here' }))).toBeNull();

    value(await enq({ op: 'enqueue', job: { queue: 'ops', payload: 1, id: 'adm-2', maxAttempts: 1 } }));
    const [l] = value<LeaseResult>(await api({ op: 'lease', lease: { owner: 'w', queues: ['ops'], ttlMs: 5000 } })).leases;
    expect(value<{ outcome: string }>(await api({ op: 'ackFailed', lease: l, error: 'boom' })).outcome).toBe('dead');
    await drain(wakeUrl, 2);
    expect(value<{ outcome: string }>(await admin({ op: 'requeueDead', id: 'adm-2' })).outcome).toBe('requeued');
    expect(bodies(await drain(wakeUrl, 2))).toEqual([{ queue: 'ops' }]);
  });
});

describe('functions/admin: schedule operations', () => {
  it('puts, lists, pauses, resumes and removes a schedule; bad input names the field and writes nothing', async () => {
    const put = await admin({ op: 'schedulePut', schedule: { name: 'admin-sched', cron: '*/5 * * * *', queue: 'admin-q', timezone: 'America/New_York' } });
    expect(put).toMatchObject({ ok: true, value: { outcome: 'created', schedule: { name: 'admin-sched', timezone: 'America/New_York' } } });
    expect(await admin({ op: 'scheduleList' })).toMatchObject({ ok: true, value: [{ name: 'admin-sched' }] });
    expect(await admin({ op: 'schedulePause', name: 'admin-sched' })).toMatchObject({ ok: true, value: { outcome: 'paused' } });
    expect(await admin({ op: 'scheduleResume', name: 'admin-sched' })).toMatchObject({ ok: true, value: { outcome: 'resumed' } });
    expect(await admin({ op: 'scheduleGet', name: 'admin-sched' })).toMatchObject({ ok: true, value: { paused: false } });
    expect(await admin({ op: 'scheduleRemove', name: 'admin-sched' })).toMatchObject({ ok: true, value: { outcome: 'removed' } });
    const bad = await admin({ op: 'schedulePut', schedule: { name: 'bad-zone', cron: '* * * * *', queue: 'q', timezone: 'Atlantis/Nowhere' } });
    expect(bad).toMatchObject({ ok: false, error: { name: 'ValidationError', field: 'schedule.timezone' } });
    expect(await admin({ op: 'scheduleGet', name: 'bad-zone' })).toMatchObject({ ok: true, value: null });
  });
});

describe('under IAM', () => {
  it.runIf(IAM_ENFORCED)('denied nothing any test of this file asked for', () => {
    expect(iam.denials).toEqual([]);
  });
});
