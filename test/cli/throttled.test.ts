import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { startThrottleProxy, type ThrottleProxy } from '../../tools/throttle-proxy.js';
import { endpoint, freshTable, rawAccess } from '../support/harness.js';
import { cli } from './support.js';

// A throttled command exits 4 ("unavailable: try again"), with ThrottledError and the table in
// its --json error. The throttle proxy's buckets hold one write per key and barely refill: the
// first enqueue spends the queue's partitions, so the next one is throttled.

const proxies: ThrottleProxy[] = [];
afterAll(async () => {
  for (const p of proxies.splice(0)) await p.close();
});

describe('fenceq enqueue under a throttle', () => {
  it('exits 4 with one line naming the table; --json gives ThrottledError and the table; nothing written', async () => {
    const { tableName, doc } = await freshTable('fenceq-cli-throttled');
    const proxy = await startThrottleProxy(endpoint(), { writeUnitsPerSec: 0.001 });
    proxies.push(proxy);
    const env = { FENCEQ_TABLE_NAME: tableName, FENCEQ_DYNAMODB_ENDPOINT: proxy.endpoint };
    expect((await cli(['enqueue', 'q', 'null', '--id', 'first', '--priority', '1'], { env })).code).toBe(EXIT.ok);
    const text = await cli(['enqueue', 'q', 'null', '--id', 'second', '--priority', '1'], { env });
    expect(text.code).toBe(EXIT.unavailable);
    expect(text.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(text.stderr).toMatch(new RegExp(`^fenceq: .*throttled a request to table ${tableName}\\b`));
    const asJson = await cli(['--json', 'enqueue', 'q', 'null', '--id', 'second', '--priority', '1'], { env });
    expect(asJson.code).toBe(EXIT.unavailable);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { name: 'ThrottledError', tableName } });
    expect(await rawAccess(doc, tableName).get('second')).toBeUndefined();
  });
});
