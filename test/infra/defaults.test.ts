import { describe, expect, it } from 'vitest';
import { handlers } from '../../functions/example-handlers.js';
import { DEFAULTS } from '../../infra/defaults.js';

describe('the construct defaults', () => {
  it('name exactly the queues the example worker has handlers for (the defaults hold the names as data, not the handlers)', () => {
    expect([...DEFAULTS.workerQueues].sort()).toEqual(Object.keys(handlers).sort());
  });
});
