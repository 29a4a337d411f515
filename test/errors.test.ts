import { describe, expect, it } from 'vitest';
import { ConfigError, RemoteInvocationError } from '../src/aws/errors.js';
import { CliError } from '../src/cli/exit-codes.js';
import * as core from '../src/errors.js';
import { MissingPackageError } from '../src/local/optional-packages.js';
import * as worker from '../src/worker/errors.js';

// Every error class fenceq throws accepts `{ cause }` (as Error does) and keeps it, so a wrapped
// SDK or handler error is never lost; callers branch on the class.

const cause = new Error('the underlying failure');
const built: [string, Error][] = [
  ['FenceqError', new core.FenceqError('base', { cause })],
  ['ValidationError', new core.ValidationError('job.queue', 'x y', 'bad name', { cause })],
  ['JobNotFoundError', new core.JobNotFoundError('j-1', { cause })],
  ['TableUnavailableError', new core.TableUnavailableError('t', 'gone', { cause })],
  ['EnqueueIncompleteError', new core.EnqueueIncompleteError(['a'], 3, { cause })],
  ['ThrottledError', new core.ThrottledError('t', 'throttled', { cause })],
  ['InvalidStateError', new core.InvalidStateError('j-1', 'done', 'only a dead job can be requeued', { cause })],
  ['ScheduleConflictError', new core.ScheduleConflictError('nightly', 3, { cause })],
  ['WaitTimeoutError', new core.WaitTimeoutError('j-1', 100, 'running', { cause })],
  ['UnknownQueueError', new core.UnknownQueueError('queue', 'nosuch', { cause })],
  ['ShardLayoutBusyError', new core.ShardLayoutBusyError(5, { cause })],
  ['DependencyError', new core.DependencyError('cycle', 'p', ['p', 'a', 'p'], { cause })],
  ['MalformedItemError', new core.MalformedItemError('job', 'j-1', 'leaseGeneration', 'x', 'a number', { cause })],
  ['ConfigError', new ConfigError('FENCEQ_TABLE_NAME', 'missing', { cause })],
  ['RemoteInvocationError', new RemoteInvocationError('fn', 'Sandbox.Timedout', 'timed out', { cause })],
  ['CliError', new CliError(1, 'failed', { cause })],
  ['MissingPackageError', new MissingPackageError('fenceq start', ['dynalite'], { cause })],
  ['LeaseLostError', new worker.LeaseLostError('j-1', 3, 4, 'running', undefined, { cause })],
  ['JobCancelledError', new worker.JobCancelledError('j-1', 3, 4, 'cancelled', undefined, { cause })],
  ['HandlerTimeoutError', new worker.HandlerTimeoutError('j-1', 1000, { cause })],
  ['HandlerCrashError', new worker.HandlerCrashError('j-1', cause)],
  ['PayloadInvalidError', new worker.PayloadInvalidError('j-1', 'q', cause)],
  ['ResultInvalidError', new worker.ResultInvalidError('j-1', cause)],
  ['WorkerStoppedError', new worker.WorkerStoppedError('w-1', { cause })],
];

describe('error classes', () => {
  it.each(built)('%s keeps its cause, and its name is its class', (name, err) => {
    expect(err.cause).toBe(cause);
    expect(err.name).toBe(name);
    expect(err).toBeInstanceOf(core.FenceqError);
    expect(err.constructor.name).toBe(name);
  });

  it('the list covers every error class src/errors.ts and src/worker/errors.ts export', () => {
    const classes = [...Object.entries(core), ...Object.entries(worker)]
      .filter(([, v]) => typeof v === 'function' && v.prototype instanceof Error)
      .map(([k]) => k);
    expect(classes.filter((k) => !built.some(([name]) => name === k)).sort()).toEqual([]);
  });
});
