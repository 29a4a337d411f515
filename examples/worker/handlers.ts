/**
 * Your handlers: queue name -> handler. The same file runs everywhere: `npx fenceq work --handlers
 * handlers.ts` on a laptop or a Fargate task, and the Lambda worker (lambda.ts) on AWS.
 */
import type { Handler, HandlerDefinition } from 'fenceq';

/** `email`: sends one email (here: pretends to) and returns what was sent. */
const email: HandlerDefinition = {
  validate: (payload) => {
    const to = (payload as { to?: unknown } | null)?.to;
    if (typeof to !== 'string' || !to.includes('@')) throw new Error('payload.to must be an email address');
  },
  handle: async (job) => ({ sent: (job.payload as { to: string }).to, attempt: job.attempt }),
  timeoutMs: 30_000,
};

/** `echo`: returns its payload. */
const echo: Handler = (job) => job.payload;

/** Queue name -> handler. */
export const handlers = { email, echo };
