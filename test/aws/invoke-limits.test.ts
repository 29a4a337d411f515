/**
 * Issue 29 part 3: a synchronous Lambda invocation carries at most 6 MB each way. The enqueue reply
 * names each job without echoing its payload, so the largest batch a request can carry gets a reply
 * smaller than itself; the local invoke server enforces both of AWS's limits with AWS's errors, so
 * a reply that would fail on AWS fails here too.
 */
import { InvokeCommand, LambdaServiceException } from '@aws-sdk/client-lambda';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaClient } from '../../src/aws/clients.js';
import { RemoteInvocationError } from '../../src/aws/errors.js';
import { LambdaProducer } from '../../src/aws/lambda-job-store.js';
import type { LambdaContext } from '../../src/aws/lambda-types.js';
import { ValidationError } from '../../src/errors.js';
import { startLambdaInvokeServer, type LambdaInvokeServer } from '../../src/local/lambda-invoke-server.js';
import { MAX_ENQUEUE_BATCH } from '../../src/validate.js';
import { coldStart, handlerEnv } from './support.js';
import { freshTable } from '../support/harness.js';
import { rejectedWith } from '../support/errors.js';

/** AWS's request limit of a synchronous invocation (6 MiB) and its response limit (the figure its error names). */
const REQUEST_LIMIT = 6_291_456;
const RESPONSE_LIMIT = 6_291_556;

let server: LambdaInvokeServer;
let producer: LambdaProducer;
let doc: DynamoDBDocumentClient;
let tableName: string;
/** The last enqueue invocation's event and reply, as JSON bytes: what the server read and wrote. */
const measured = { requestBytes: 0, replyBytes: 0 };

beforeAll(async () => {
  const table = await freshTable();
  ({ doc, tableName } = table);
  const enq = (await coldStart(() => import('../../functions/enqueue.js'), handlerEnv(tableName))).handler;
  server = await startLambdaInvokeServer({
    functions: {
      'fenceq-enqueue': async (event: unknown, context: LambdaContext) => {
        const reply = await enq(event, context);
        measured.requestBytes = Buffer.byteLength(JSON.stringify(event));
        measured.replyBytes = Buffer.byteLength(JSON.stringify(reply));
        return reply;
      },
      sink: () => null,
      // JSON of a string of n characters is n + 2 bytes (its quotes).
      'reply-at-limit': () => 'A'.repeat(RESPONSE_LIMIT - 2),
      'reply-over-limit': () => 'A'.repeat(RESPONSE_LIMIT - 1),
    },
  });
  producer = new LambdaProducer({ functionName: 'fenceq-enqueue', endpoint: server.endpoint });
});

afterAll(async () => {
  await server?.stop();
});

/** The ids of every job of `queue` in the table (not the store's own items, whose ids start with `~`). */
async function storedIds(queue: string): Promise<string[]> {
  const ids: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(
      new ScanCommand({
        TableName: tableName,
        ConsistentRead: true,
        FilterExpression: '#q = :q AND NOT begins_with(id, :own)',
        ProjectionExpression: 'id',
        ExpressionAttributeNames: { '#q': 'queue' },
        ExpressionAttributeValues: { ':q': queue, ':own': '~' },
        ExclusiveStartKey: start,
      }),
    );
    ids.push(...(out.Items ?? []).map((i) => i.id as string));
    start = out.LastEvaluatedKey;
  } while (start);
  return ids;
}

describe('enqueueMany through the Lambda transport', () => {
  it('1,000 jobs of 6 KB: the call succeeds, its reply is smaller than its request and carries no payload, every job written once', async () => {
    const jobs = Array.from({ length: MAX_ENQUEUE_BATCH }, (_, i) => ({ queue: 'bulk', payload: `${i}:`.padEnd(6_200, 'x') }));
    const out = await producer.enqueueMany(jobs);

    expect(measured.requestBytes).toBeGreaterThan(6_200_000);
    expect(measured.requestBytes).toBeLessThanOrEqual(REQUEST_LIMIT);
    expect(measured.replyBytes).toBeLessThan(measured.requestBytes);
    expect(measured.replyBytes).toBeLessThan(MAX_ENQUEUE_BATCH * 400);

    expect(out.size).toBe(MAX_ENQUEUE_BATCH);
    for (const [id, o] of out) {
      expect(o).toEqual({ outcome: 'created', id, queue: 'bulk', generation: expect.any(Number), runAt: expect.any(Number), priority: 0, maxAttempts: 5 });
    }
    const ids = await storedIds('bulk');
    expect(ids).toHaveLength(MAX_ENQUEUE_BATCH);
    expect(new Set(ids)).toEqual(new Set(out.keys()));
  }, 120_000);

  it('a batch over the 6 MB request limit is a ValidationError at the client: nothing is sent or written', async () => {
    const before = server.invocations.get('fenceq-enqueue') ?? 0;
    const jobs = Array.from({ length: MAX_ENQUEUE_BATCH }, () => ({ queue: 'toobig', payload: 'x'.repeat(6_400) }));
    const err = await rejectedWith(producer.enqueueMany(jobs), ValidationError);
    expect(err.field).toBe('event');
    expect(err.value).toBeGreaterThan(REQUEST_LIMIT);
    expect(server.invocations.get('fenceq-enqueue') ?? 0).toBe(before);
    expect(await storedIds('toobig')).toEqual([]);
  });
});

describe("the local invoke server enforces AWS's synchronous limits", () => {
  const client = () => lambdaClient({ endpoint: server.endpoint });
  /** A JSON string event of exactly `bytes` bytes. */
  const eventOf = (bytes: number) => Buffer.from(`"${'e'.repeat(bytes - 2)}"`);

  it('a request over 6,291,456 bytes is 413 RequestEntityTooLargeException and the function never runs', async () => {
    const at = await client().send(new InvokeCommand({ FunctionName: 'sink', Payload: eventOf(REQUEST_LIMIT) }));
    expect(at.StatusCode).toBe(200);
    expect(at.FunctionError).toBeUndefined();
    const ran = server.invocations.get('sink');
    expect(ran).toBe(1);

    const err = await rejectedWith(client().send(new InvokeCommand({ FunctionName: 'sink', Payload: eventOf(REQUEST_LIMIT + 1) })), LambdaServiceException);
    expect(err.name).toBe('RequestEntityTooLargeException');
    expect(err.$metadata.httpStatusCode).toBe(413);
    expect(server.invocations.get('sink')).toBe(ran);
  });

  it("a reply over 6,291,556 bytes is AWS's Function.ResponseSizeTooLarge function error, a RemoteInvocationError at fenceq's client", async () => {
    const at = await client().send(new InvokeCommand({ FunctionName: 'reply-at-limit', Payload: Buffer.from('{}') }));
    expect(at.FunctionError).toBeUndefined();
    expect(at.Payload).toHaveLength(RESPONSE_LIMIT);

    const over = await client().send(new InvokeCommand({ FunctionName: 'reply-over-limit', Payload: Buffer.from('{}') }));
    expect(over.StatusCode).toBe(200);
    expect(over.FunctionError).toBe('Unhandled');
    expect(JSON.parse(Buffer.from(over.Payload!).toString('utf8'))).toEqual({
      errorMessage: 'Response payload size exceeded maximum allowed payload size (6291556 bytes).',
      errorType: 'Function.ResponseSizeTooLarge',
    });

    const remote = new LambdaProducer({ functionName: 'reply-over-limit', endpoint: server.endpoint });
    expect(await rejectedWith(remote.get('any'), RemoteInvocationError)).toMatchObject({
      functionName: 'reply-over-limit',
      remoteType: 'Function.ResponseSizeTooLarge',
    });
  });
});
