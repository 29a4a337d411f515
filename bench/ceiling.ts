/**
 * The ceiling: raw conditional UpdateItem calls per second at a given concurrency on the same
 * emulator, through the same document client and table schema the store uses. A job's life
 * needs at least three writes (enqueue, lease, ack), so ceiling / 3 is the most jobs per second
 * this machine can do.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../src/dynamo-clients.js';
import { benchClient, freshBenchTable } from '../tools/env.js';
import { sleep } from '../tools/stats.js';
import { processCpuMs } from './cpu.js';

/** One ceiling measurement. */
export interface CeilingResult {
  readonly concurrency: number;
  readonly updatesPerSec: number;
  readonly maxJobsPerSec: number;
  readonly durationMs: number;
  /** CPU ms this process (the client: document client, SDK, HTTP) spent per update in the counted window. */
  readonly clientCpuMsPerUpdate: number;
  /** Cores of CPU this process used in the counted window (1 means the client was the bottleneck). */
  readonly clientCores: number;
  /** Cores the emulator process used in the counted window; null when its pid is unknown (DYNAMODB_ENDPOINT). */
  readonly emulatorCores: number | null;
}

/** Measures conditional UpdateItem/s with `concurrency` calls in flight for `durationMs` (after a short warm-up). */
export async function measureCeiling(endpoint: string, concurrency: number, durationMs: number, emulatorPid: number | null = null): Promise<CeilingResult> {
  const client = benchClient(endpoint);
  const doc = documentClient(client);
  const table = await freshBenchTable(client, 'bench-ceiling');
  try {
    const items = concurrency * 4;
    const payload = JSON.stringify({ n: 0, body: 'x'.repeat(100) });
    for (let i = 0; i < items; i += 32) {
      await Promise.all(
        Array.from({ length: Math.min(32, items - i) }, (_, k) =>
          doc.send(new PutCommand({ TableName: table.tableName, Item: { id: `c-${i + k}`, state: 'pending', leaseGeneration: 1, payload } })),
        ),
      );
    }
    let counting = false;
    let ops = 0;
    let stop = false;
    const loop = async (slot: number) => {
      for (let n = 0; !stop; n++) {
        const id = `c-${slot + (n % 4) * concurrency}`;
        await doc.send(
          new UpdateCommand({
            TableName: table.tableName,
            Key: { id },
            UpdateExpression: 'SET #g = #g + :one, #u = :now',
            ConditionExpression: 'attribute_exists(id) AND #s = :pending',
            ExpressionAttributeNames: { '#g': 'leaseGeneration', '#u': 'updatedAt', '#s': 'state' },
            ExpressionAttributeValues: { ':one': 1, ':now': Date.now(), ':pending': 'pending' },
            ReturnValues: 'ALL_NEW',
          }),
        );
        if (counting) ops++;
      }
    };
    const loops = Array.from({ length: concurrency }, (_, i) => loop(i));
    await sleep(Math.min(1_000, durationMs / 4));
    counting = true;
    const cpu0 = process.cpuUsage();
    const emu0 = processCpuMs(emulatorPid);
    const t0 = performance.now();
    await sleep(durationMs);
    const elapsed = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const emu1 = processCpuMs(emulatorPid);
    counting = false;
    stop = true;
    await Promise.all(loops);
    const updatesPerSec = (ops * 1000) / elapsed;
    const cpuMs = (cpu.user + cpu.system) / 1000;
    return {
      concurrency,
      updatesPerSec,
      maxJobsPerSec: updatesPerSec / 3,
      durationMs: Math.round(elapsed),
      clientCpuMsPerUpdate: ops ? cpuMs / ops : 0,
      clientCores: cpuMs / elapsed,
      emulatorCores: emu0 === null || emu1 === null ? null : (emu1 - emu0) / elapsed,
    };
  } finally {
    await table.drop();
    client.destroy();
  }
}
