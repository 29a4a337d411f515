/**
 * The modelled write and read units of one job's whole life (enqueue, lease, ack done) for a few
 * payload sizes, from the real item images the store writes: each step's image is read back
 * and priced by the rules in tools/cost-model.ts. Also the failure paths (a retry, a release).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { benchClient, benchQueue, freshBenchTable } from '../tools/env.js';
import { modelLife, type ModelledStep } from '../tools/cost-model.js';
import { plainItemSize } from '../tools/item-size.js';

/** The modelled life of one job shape. */
export interface LifeModel {
  readonly label: string;
  readonly payloadBytes: number;
  /** Largest base item image over the life. */
  readonly maxItemBytes: number;
  readonly steps: ModelledStep[];
  readonly baseUnits: number;
  readonly indexWrites: number;
  readonly indexUnits: number;
  readonly writeUnits: number;
}

/** Payload shapes priced: the bench's own, the largest that keeps the item within 1 KB, and a 1 KB payload. */
function payloadShapes(fitsIn1Kb: number): { label: string; payload: unknown }[] {
  return [
    { label: 'bench job (~120 B payload)', payload: { n: 1, body: 'x'.repeat(100) } },
    { label: '1 KB job (whole item <= 1 KB)', payload: { body: 'x'.repeat(fitsIn1Kb) } },
    { label: '1 KB payload (item ~1.25 KB)', payload: { body: 'x'.repeat(1012) } },
  ];
}

/** Runs each shape through enqueue, lease, ackDone (and a failed attempt and a release) and models every step. */
export async function modelLives(endpoint: string): Promise<{ happy: LifeModel[]; retryStep: LifeModel; releaseStep: LifeModel }> {
  const client = benchClient(endpoint);
  const doc = documentClient(client);
  const table = await freshBenchTable(client, 'bench-cost');
  const queue = benchQueue(table.tableName, client);
  const read = async (id: string) => (await doc.send(new GetCommand({ TableName: table.tableName, Key: { id }, ConsistentRead: true }))).Item;
  const lifeOf = async (label: string, payload: unknown, id: string): Promise<LifeModel> => {
    await queue.enqueue({ queue: 'cost', id, payload: payload as never });
    const enqueued = await read(id);
    const [lease] = (await queue.lease({ owner: 'cost-model', queues: ['cost'], ttlMs: 30_000, max: 1 })).leases;
    const leased = await read(id);
    // A result of `null`, as most handlers return.
    await queue.ackDone(lease!, null);
    const done = await read(id);
    return summarise(label, JSON.stringify(payload).length, [
      { step: 'enqueue', item: enqueued },
      { step: 'lease', item: leased },
      { step: 'ackDone', item: done },
    ]);
  };
  try {
    // Find the largest payload body that keeps every image of the life within 1 KB.
    let fits = 1024;
    for (let probe = 0; probe < 6; probe++) {
      const m = await lifeOf('probe', { body: 'x'.repeat(fits) }, `probe-${probe}`);
      if (m.maxItemBytes <= 1024) break;
      fits -= m.maxItemBytes - 1024;
    }
    const happy: LifeModel[] = [];
    let n = 0;
    for (const s of payloadShapes(fits)) happy.push(await lifeOf(s.label, s.payload, `life-${n++}`));
    // A failed attempt that is retried, then a graceful release: the extra steps they add.
    await queue.enqueue({ queue: 'cost', id: 'retry', payload: { n: 1, body: 'x'.repeat(100) } });
    const [l1] = (await queue.lease({ owner: 'cost-model', queues: ['cost'], ttlMs: 30_000, max: 1 })).leases;
    const leased = await read('retry');
    await queue.ackFailed(l1!, new Error('boom'));
    const retrying = await read('retry');
    const retryStep = summarise(
      'ackFailed (retry)',
      0,
      [
        { step: 'lease', item: leased },
        { step: 'ackFailed', item: retrying },
      ],
      1,
    );
    await queue.enqueue({ queue: 'cost', id: 'release', payload: { n: 1, body: 'x'.repeat(100) } });
    const [l2] = (await queue.lease({ owner: 'cost-model', queues: ['cost'], ttlMs: 30_000, max: 1 })).leases;
    const held = await read('release');
    await queue.release(l2!);
    const released = await read('release');
    const releaseStep = summarise(
      'release',
      0,
      [
        { step: 'lease', item: held },
        { step: 'release', item: released },
      ],
      1,
    );
    return { happy, retryStep, releaseStep };
  } finally {
    await table.drop();
    client.destroy();
  }
}

function summarise(label: string, payloadBytes: number, images: { step: string; item: Record<string, unknown> | undefined }[], skip = 0): LifeModel {
  const all = modelLife(images);
  const steps = all.slice(skip);
  return {
    label,
    payloadBytes,
    maxItemBytes: Math.max(...images.map((i) => (i.item ? plainItemSize(i.item) : 0))),
    steps,
    baseUnits: steps.reduce((a, s) => a + s.baseUnits, 0),
    indexWrites: steps.reduce((a, s) => a + s.index.writes, 0),
    indexUnits: steps.reduce((a, s) => a + s.index.units, 0),
    writeUnits: steps.reduce((a, s) => a + s.baseUnits + s.index.units, 0),
  };
}
