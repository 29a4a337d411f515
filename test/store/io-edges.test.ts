/**
 * Edges of the store's one conditional-write path (src/store/core/io.ts): which written items it tells
 * the lease hints about, what a write that asks for no item returns, how a lost race yields the
 * item as it stands (the copy sent with the failure, else a consistent read), and which failures
 * become TableUnavailableError.
 */
import { ConditionalCheckFailedException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { TableUnavailableError } from '../../src/errors.js';
import type { JobQueue } from '../../src/job-queue.js';
import type { StoreContext } from '../../src/store/core/context.js';
import { itemAfterLoss, notePending, readItem, updateElseLoss, updateElseNull } from '../../src/store/core/io.js';
import { LeaseHints } from '../../src/store/memory/lease-hints.js';
import { freshQueue } from '../support/harness.js';

const ctxOf = (queue: JobQueue) => (queue as unknown as { core: { ctx: StoreContext } }).core.ctx;

/** Lease hints that record every pending write they are told about. */
class RecordingHints extends LeaseHints {
  readonly noted: [string, string, number][] = [];
  override wrotePending(gpk: string, gsk: string, now: number): void {
    this.noted.push([gpk, gsk, now]);
    super.wrotePending(gpk, gsk, now);
  }
}

async function setup() {
  const q = await freshQueue();
  const hints = new RecordingHints(4, () => 0);
  const ctx: StoreContext = { ...ctxOf(q.queue), hints };
  return { ...q, ctx, hints };
}

/** An UpdateItem that sets `x` on `id` when `state` is `expected`. */
const setX = (id: string, expected: string) => ({
  Key: { id },
  UpdateExpression: 'SET #x = :x',
  ConditionExpression: '#s = :s',
  ExpressionAttributeNames: { '#x': 'x', '#s': 'state' },
  ExpressionAttributeValues: { ':x': 1, ':s': expected },
});

describe('io: which writes the lease hints hear of', () => {
  it('a write that leaves a job pending with both index keys is noted with its keys and the clock', async () => {
    const { ctx, hints, raw, clock } = await setup();
    await raw.put({ id: 'p', state: 'pending', gpk: 'prio|q|0', gsk: '0999|k' });
    const written = await updateElseNull(ctx, setX('p', 'pending'));
    expect(written).toMatchObject({ id: 'p', x: 1, state: 'pending' });
    expect(hints.noted).toEqual([['prio|q|0', '0999|k', clock.now]]);
  });

  it('a running job, or a pending job missing either index key, is not noted', async () => {
    const { ctx, hints, raw } = await setup();
    await raw.put({ id: 'r', state: 'running', gpk: 'lease|0', gsk: '1|r' });
    await raw.put({ id: 'no-gsk', state: 'pending', gpk: 'prio|q|0' });
    await raw.put({ id: 'no-gpk', state: 'pending', gsk: '0999|k' });
    expect(await updateElseNull(ctx, setX('r', 'running'))).toMatchObject({ x: 1 });
    for (const id of ['no-gsk', 'no-gpk']) expect(await updateElseNull(ctx, setX(id, 'pending'))).toMatchObject({ id, x: 1 });
    expect(hints.noted).toEqual([]);
  });

  it('notePending on its own: pending with both keys as strings only (the table refuses other key types, so this is its only test)', () => {
    const hints = new RecordingHints(4, () => 0);
    const ctx = { hints, clock: () => 5 } as unknown as StoreContext;
    notePending(ctx, { id: 'a', state: 'pending', gpk: 'sched|q|1', gsk: '4|a' });
    notePending(ctx, { id: 'b', state: 'done', gpk: 'sched|q|1', gsk: '4|b' });
    notePending(ctx, { id: 'c', state: 'pending', gpk: 7, gsk: '4|c' });
    notePending(ctx, { id: 'd', state: 'pending', gpk: 'sched|q|1', gsk: 7 });
    notePending(ctx, {});
    expect(hints.noted).toEqual([['sched|q|1', '4|a', 5]]);
  });

  it('a write that asks for no item returns an empty object and notes nothing, though the item is pending', async () => {
    const { ctx, hints, raw } = await setup();
    await raw.put({ id: 'p', state: 'pending', gpk: 'prio|q|0', gsk: '0999|k' });
    expect(await updateElseNull(ctx, setX('p', 'pending'), false)).toEqual({});
    expect(hints.noted).toEqual([]);
    expect(await raw.get('p')).toMatchObject({ x: 1 });
  });
});

describe('io: a lost race', () => {
  it('updateElseNull yields null and writes nothing', async () => {
    const { ctx, raw } = await setup();
    await raw.put({ id: 'j', state: 'running' });
    expect(await updateElseNull(ctx, setX('j', 'pending'))).toBeNull();
    expect(await raw.get('j')).toEqual({ id: 'j', state: 'running' });
  });

  it("updateElseLoss's current() yields the item as it stands, or undefined for no item", async () => {
    const { ctx, raw } = await setup();
    await raw.put({ id: 'j', state: 'running', n: 3 });
    const lost = await updateElseLoss(ctx, setX('j', 'pending'));
    expect(lost.written).toBeNull();
    if (lost.written !== null) throw new Error('the write should have lost');
    expect(await lost.current()).toEqual({ id: 'j', state: 'running', n: 3 });
    const gone = await updateElseLoss(ctx, setX('gone', 'pending'));
    if (gone.written !== null) throw new Error('the write should have lost');
    expect(await gone.current()).toBeUndefined();
    const won = await updateElseLoss(ctx, setX('j', 'running'));
    expect(won).toEqual({ written: { id: 'j', state: 'running', n: 3, x: 1 } });
  });

  it('updateElseLoss reads the item only when current() is asked for, consistently, and at most once', async () => {
    const { ctx, raw, client } = await setup();
    await raw.put({ id: 'j', state: 'running' });
    const gets: boolean[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand') gets.push((args.input as { ConsistentRead?: boolean }).ConsistentRead === true);
        return next(args);
      },
      { step: 'initialize', name: 'io-gets' },
    );
    const out = await updateElseLoss(ctx, setX('j', 'pending'));
    expect(out.written).toBeNull();
    expect(gets).toEqual([]);
    if (out.written !== null) throw new Error('the write should have lost');
    expect(await out.current()).toEqual({ id: 'j', state: 'running' });
    expect(await out.current()).toEqual({ id: 'j', state: 'running' });
    // An endpoint that sends the item with the failure (AWS) needs no read; one that does not, one consistent read.
    expect(gets.length).toBeLessThanOrEqual(1);
    expect(gets.every((consistent) => consistent)).toBe(true);
  });

  it('itemAfterLoss uses the copy sent with the failure and sends nothing', async () => {
    const noRequest = {
      send: () => {
        throw new Error('no request expected');
      },
    };
    const ctx = {
      doc: noRequest,
      client: noRequest,
      tableName: 't',
    } as unknown as StoreContext;
    const err = new ConditionalCheckFailedException({ message: 'lost', $metadata: {}, Item: marshall({ id: 'j', state: 'done', n: 2 }) });
    expect(await itemAfterLoss(ctx, err, 'j')).toEqual({ id: 'j', state: 'done', n: 2 });
  });

  it('itemAfterLoss without a copy reads the item by the id it is given', async () => {
    const { ctx, raw } = await setup();
    await raw.put({ id: 'j', state: 'done' });
    const err = new ConditionalCheckFailedException({ message: 'lost', $metadata: {} });
    expect(await itemAfterLoss(ctx, err, 'j')).toEqual({ id: 'j', state: 'done' });
    expect(await itemAfterLoss(ctx, err, 'other')).toBeUndefined();
  });
});

describe('io: failures other than a lost race', () => {
  it('a missing table is a TableUnavailableError naming it, with the SDK error as cause, from a write and from a read', async () => {
    const { ctx } = await setup();
    const gone: StoreContext = { ...ctx, tableName: 'fenceq-io-no-such-table' };
    const write = await updateElseNull(gone, setX('j', 'pending')).catch((e: unknown) => e);
    expect(write).toBeInstanceOf(TableUnavailableError);
    expect((write as TableUnavailableError).message).toContain('fenceq-io-no-such-table');
    expect((write as TableUnavailableError).cause).toBeInstanceOf(ResourceNotFoundException);
    const read = await readItem(gone, 'j').catch((e: unknown) => e);
    expect(read).toBeInstanceOf(TableUnavailableError);
    expect((read as TableUnavailableError).cause).toBeInstanceOf(ResourceNotFoundException);
  });

  it('any other failure passes through as the SDK raised it', async () => {
    const { ctx } = await setup();
    const bad = { ...setX('j', 'pending'), UpdateExpression: 'SET #x = :undefined_value' };
    const err = await updateElseNull(ctx, bad).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(TableUnavailableError);
    expect(err).not.toBeInstanceOf(ConditionalCheckFailedException);
    expect((err as Error).name).toBe('ValidationException');
  });
});
