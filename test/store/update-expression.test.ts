/**
 * buildUpdate (src/store/core/expression.ts), guarded as the store writes it, against the real endpoint: an update made only of
 * removals, and raw expressions whose names and values the caller supplies, change the item as
 * they say.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { buildUpdate } from '../../src/store/core/expression.js';
import { guarded, present } from '../../src/store/core/guards.js';
import { freshTable, rawAccess } from '../support/harness.js';

describe('buildUpdate', () => {
  it('an update of removals only removes the attributes, and set, raw expressions and removals combine', async () => {
    const { doc, tableName } = await freshTable();
    const raw = rawAccess(doc, tableName);
    await raw.put({ id: 'a', keep: 1, gone: 2, alsoGone: 3, count: 5 });
    // As every store write: through guarded(), which also drops empty name and value maps.
    const run = (parts: Parameters<typeof buildUpdate>[0]) =>
      doc.send(new UpdateCommand({ TableName: tableName, Key: { id: 'a' }, ...guarded(buildUpdate(parts), present()) }));

    await run({ remove: ['gone'] });
    expect(await raw.get('a')).toEqual({ id: 'a', keep: 1, alsoGone: 3, count: 5 });

    // A raw expression over a name and a value only the caller knows (`#n`, `:step`).
    await run({
      set: { keep: 'k', skipped: undefined },
      setExpr: { count: '#n + :step' },
      names: { '#n': 'count' },
      values: { ':step': 2 },
      remove: ['alsoGone'],
    });
    expect(await raw.get('a')).toEqual({ id: 'a', keep: 'k', count: 7 });
  });
});
