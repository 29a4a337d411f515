import { describe, expect, it } from 'vitest';
import { WakeUpSender } from '../../src/aws/wake-up-sender.js';
import { memoryLogger } from '../../src/log.js';
import { testClock } from '../support/harness.js';
import { bodies, drain, freshSqsQueue, queueUrlFor, testSqs } from './support.js';

describe('WakeUpSender', () => {
  it('sends one message per queue name however many times it is noted, in batches of ten', async () => {
    const url = await freshSqsQueue('wake');
    const sender = new WakeUpSender({ sqs: testSqs(), queueUrl: url, logger: memoryLogger() });
    const names = Array.from({ length: 23 }, (_, i) => `q${i}`);
    for (let round = 0; round < 50; round++) sender.note(names);
    await sender.flush();
    expect(sender.counters).toEqual({ sent: 23, delayed: 0, failed: 0 });
    const got = bodies<{ queue: string }>(await drain(url));
    expect(got.map((b) => b.queue).sort()).toEqual([...names].sort());
  });

  it("within a window sends one more message, delayed to the window's end, and nothing after that until it arrives", async () => {
    const url = await freshSqsQueue('wake');
    const clock = testClock();
    const sender = new WakeUpSender({ sqs: testSqs(), queueUrl: url, clock, windowMs: 1000, logger: memoryLogger() });
    sender.note(['a']);
    await sender.flush();
    clock.advance(100);
    sender.note(['a']);
    await sender.flush(); // inside the window: one delayed message
    clock.advance(100);
    for (let i = 0; i < 10; i++) {
      sender.note(['a']);
      await sender.flush(); // covered by the delayed message
    }
    expect(sender.counters).toEqual({ sent: 2, delayed: 1, failed: 0 });
    expect(bodies(await drain(url))).toEqual([{ queue: 'a' }]); // the delayed one is not visible yet
    expect(bodies(await drain(url, 2))).toEqual([{ queue: 'a' }]);
    // After the delayed message's window, a note is sent at once again.
    clock.advance(3000);
    sender.note(['a']);
    await sender.flush();
    expect(sender.counters.sent).toBe(3);
    expect(bodies(await drain(url))).toEqual([{ queue: 'a' }]);
  });

  it('sends on its own after a short coalescing delay when nobody flushes (a long-running process)', async () => {
    const url = await freshSqsQueue('wake');
    const sender = new WakeUpSender({ sqs: testSqs(), queueUrl: url, coalesceMs: 10, logger: memoryLogger() });
    sender.note(['bg']);
    expect(bodies(await drain(url, 2))).toEqual([{ queue: 'bg' }]);
  });

  it('logs and drops a failed send (a hint is not worth failing a transition), and sends again at the next note', async () => {
    const logger = memoryLogger();
    const sender = new WakeUpSender({ sqs: testSqs(), queueUrl: await queueUrlFor('never-created-wake'), logger });
    sender.note(['x', 'y']);
    await expect(sender.flush()).resolves.toBeUndefined();
    expect(sender.counters).toEqual({ sent: 0, delayed: 0, failed: 2 });
    expect(logger.events('wake.failed')).toHaveLength(1);
    sender.note(['x']);
    await sender.flush();
    expect(sender.counters.failed).toBe(3); // tried again at once: a failure opens no window
  });

  it('a message SQS refuses in a later batch is traced to its own queue: its window is cleared and it is sent again at the next note', async () => {
    const url = await freshSqsQueue('wake');
    const logger = memoryLogger();
    const sqs = testSqs();
    // SQS refuses single entries of a batch (Failed) only for reasons the emulator never has
    // (throttled, KMS); the reply of the second batch is given one such refusal, for entry Id 12.
    let batches = 0;
    sqs.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const reply = out.output as { Successful?: { Id?: string }[]; Failed?: { Id?: string; Code?: string; SenderFault?: boolean }[] };
        if (++batches === 2) {
          reply.Successful = reply.Successful?.filter((e) => e.Id !== '12');
          reply.Failed = [{ Id: '12', Code: 'KMS.ThrottlingException', SenderFault: false }];
        }
        return out;
      },
      { step: 'initialize' },
    );
    const sender = new WakeUpSender({ sqs, queueUrl: url, logger });
    const names = Array.from({ length: 15 }, (_, i) => `q${String(i).padStart(2, '0')}`);
    sender.note(names);
    await sender.flush();
    expect(sender.counters).toEqual({ sent: 14, delayed: 0, failed: 1 });
    expect(logger.events('wake.failed').map((r) => r.fields.queue)).toEqual(['q12']);
    const sent = logger.events('wake.sent').flatMap((r) => r.fields.queues as string[]);
    expect(sent).not.toContain('q12');
    expect(sent).toHaveLength(14);
    // q12's window was cleared: noted again, it is sent at once; q03, inside its window, is delayed.
    sender.note(['q12', 'q03']);
    await sender.flush();
    expect(sender.counters).toEqual({ sent: 16, delayed: 1, failed: 1 });
    expect(logger.events('wake.sent').at(-1)?.fields.queues).toEqual(['q12', 'q03']);
  });
});
