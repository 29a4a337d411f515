/**
 * Every named guard of src/store/core/guards.ts on its own, on a real endpoint: each is a complete
 * condition (it brings every name and value it uses, whatever the write it guards names), it
 * matches the item it describes, and it refuses an item that differs in any one of its parts,
 * writing nothing.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/job.js';
import {
  absent,
  absentOrWithdrawn,
  asRead,
  atGeneration,
  atVersion,
  deadAtGeneration,
  deadNoticeUndelivered,
  dueAt,
  groupEmpty,
  groupHeadIs,
  guarded,
  lapsedAsRead,
  leaseHeld,
  legacyNamesPresent,
  notYetDue,
  orphanAt,
  parkedIn,
  pendingAsSeen,
  present,
  slotFree,
  slotHeldBy,
  type Guard,
} from '../../src/store/core/guards.js';
import { leaseSecretHash, newLeaseSecret } from '../../src/store/core/lease-secret.js';
import { freshTable } from '../support/harness.js';

const NOW = 1_700_000_000_000;
const secret = newLeaseSecret();
const lease: Lease = { id: 'x', generation: 3, secret, incarnation: 'inc', owner: 'w', expiresAt: NOW, attempt: 1, maxAttempts: 5, queue: 'q', payload: null };
const running = { state: 'running', leaseGeneration: 3, incarnation: 'inc', leaseSecretHash: leaseSecretHash(secret) };
const lapsed = { state: 'running', leaseGeneration: 1, incarnation: 'inc', attempts: 1, maxAttempts: 2, leaseExpiresAt: NOW - 1 };

/** A guard, the items (fields besides the id; null for no item) it must match, and those it must refuse. */
const cases: [string, Guard, (Record<string, unknown> | null)[], (Record<string, unknown> | null)[]][] = [
  [
    'leaseHeld',
    leaseHeld(lease),
    [running],
    [
      { ...running, leaseSecretHash: leaseSecretHash(newLeaseSecret()) },
      { ...running, leaseGeneration: 4 },
      { ...running, incarnation: 'other' },
      { ...running, state: 'pending' },
      null,
    ],
  ],
  [
    'deadAtGeneration',
    deadAtGeneration(2),
    [{ state: 'dead', leaseGeneration: 2 }],
    [{ state: 'dead', leaseGeneration: 3 }, { state: 'pending', leaseGeneration: 2 }, null],
  ],
  [
    'pendingAsSeen',
    pendingAsSeen(1),
    [{ state: 'pending', leaseGeneration: 1 }],
    [{ state: 'running', leaseGeneration: 1 }, { state: 'pending', leaseGeneration: 2 }, null],
  ],
  ['notYetDue', notYetDue(NOW), [{ runAt: NOW + 1 }], [{ runAt: NOW }]],
  [
    'absentOrWithdrawn',
    absentOrWithdrawn(),
    [null, { state: 'cancelled', withdrawn: true }],
    [{ state: 'cancelled' }, { state: 'cancelled', withdrawn: false }, { state: 'pending', withdrawn: true }],
  ],
  ['slotFree', slotFree(NOW), [{ state: 'free' }, { state: 'held', leaseExpiresAt: NOW - 1 }], [{ state: 'held', leaseExpiresAt: NOW }, null]],
  [
    'slotHeldBy',
    slotHeldBy(lease),
    [{ state: 'held', holderId: 'x', leaseGeneration: 3, holderSecretHash: leaseSecretHash(secret) }],
    [
      { state: 'held', holderId: 'x', leaseGeneration: 2, holderSecretHash: leaseSecretHash(secret) },
      { state: 'held', holderId: 'y', leaseGeneration: 3, holderSecretHash: leaseSecretHash(secret) },
      { state: 'free', holderId: 'x', leaseGeneration: 3, holderSecretHash: leaseSecretHash(secret) },
      { state: 'held', holderId: 'x', leaseGeneration: 3, holderSecretHash: 'forged' },
    ],
  ],
  ['atVersion(undefined)', atVersion(undefined), [null], [{ version: 1 }]],
  ['atVersion(2)', atVersion(2), [{ version: 2 }], [{ version: 1 }, null]],
  ['absent', absent(), [null], [{}]],
  ['present', present(), [{}], [null]],
  [
    'asRead',
    asRead({ state: 'pending', leaseGeneration: 1 }),
    [{ state: 'pending', leaseGeneration: 1 }],
    [
      { state: 'pending', leaseGeneration: 2 },
      { state: 'running', leaseGeneration: 1 },
    ],
  ],
  [
    'atGeneration',
    atGeneration(1, 'inc'),
    [{ leaseGeneration: 1, incarnation: 'inc' }],
    [
      { leaseGeneration: 1, incarnation: 'other' },
      { leaseGeneration: 2, incarnation: 'inc' },
    ],
  ],
  [
    'dueAt',
    dueAt(NOW),
    [{ state: 'pending', runAt: NOW }],
    [
      { state: 'pending', runAt: NOW + 1 },
      { state: 'running', runAt: NOW },
    ],
  ],
  [
    'orphanAt',
    orphanAt(NOW),
    [lapsed, { ...lapsed, leaseRenewedUntil: NOW - 1 }],
    [
      { ...lapsed, leaseRenewedUntil: NOW },
      { ...lapsed, leaseExpiresAt: NOW },
      { ...lapsed, attempts: 2 },
      { ...lapsed, state: 'pending' },
    ],
  ],
  [
    'lapsedAsRead',
    lapsedAsRead(lapsed, NOW),
    [lapsed, { ...lapsed, leaseRenewedUntil: NOW - 1 }],
    [
      { ...lapsed, leaseRenewedUntil: NOW + 1 },
      { ...lapsed, leaseGeneration: 2 },
      { ...lapsed, incarnation: 'other' },
      { ...lapsed, leaseExpiresAt: NOW - 2 },
    ],
  ],
  [
    'deadNoticeUndelivered',
    deadNoticeUndelivered(2),
    [{ state: 'dead', leaseGeneration: 2, deadNotified: false }],
    [
      { state: 'dead', leaseGeneration: 2, deadNotified: true },
      { state: 'dead', leaseGeneration: 1, deadNotified: false },
    ],
  ],
  ['groupHeadIs', groupHeadIs('e1'), [{ members: ['e1', 'e2'] }], [{ members: ['e2', 'e1'] }, { members: [] }]],
  ['groupEmpty', groupEmpty(), [{ members: [] }], [{ members: ['e1'] }]],
  [
    'parkedIn',
    parkedIn('park|q|g'),
    [{ state: 'pending', gpk: 'park|q|g' }],
    [
      { state: 'pending', gpk: 'park|q|h' },
      { state: 'running', gpk: 'park|q|g' },
    ],
  ],
  ['legacyNamesPresent', legacyNamesPresent(), [{ names: new Set(['q']) }], [{}]],
];

describe('each named guard is a complete condition', () => {
  it('matches the item it describes and refuses one that differs in any part, writing nothing', async () => {
    const { doc, tableName } = await freshTable();
    let n = 0;
    for (const [name, guard, matches, refuses] of cases) {
      for (const [fields, expected] of [...matches.map((f) => [f, true] as const), ...refuses.map((f) => [f, false] as const)]) {
        const id = `${name}-${n++}`;
        if (fields) await doc.send(new UpdateCommand({ TableName: tableName, Key: { id }, ...setAll(fields) }));
        // The guarded write names nothing the guard uses: the guard must bring all of it.
        const write = guarded(
          {
            TableName: tableName,
            Key: { id },
            UpdateExpression: 'SET #touched = :touched',
            ExpressionAttributeNames: { '#touched': 'touched' },
            ExpressionAttributeValues: { ':touched': true },
          },
          guard,
        );
        const out = await doc.send(new UpdateCommand({ ...write, ReturnValues: 'ALL_NEW' })).then(
          (r) => r.Attributes,
          (e: unknown) => e,
        );
        if (expected) expect(out, `${name} should match ${JSON.stringify(fields)}`).toMatchObject({ id, touched: true });
        else expect(out, `${name} should refuse ${JSON.stringify(fields)}`).toBeInstanceOf(ConditionalCheckFailedException);
      }
    }
  });

  it('a guarded put or delete that names nothing itself is accepted (no empty name or value map is sent)', async () => {
    const { doc, tableName } = await freshTable();
    const put = () => doc.send(new PutCommand(guarded({ TableName: tableName, Item: { id: 'p' } }, absent())));
    await put();
    await expect(put()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    const del = () => doc.send(new DeleteCommand(guarded({ TableName: tableName, Key: { id: 'p' } }, present())));
    await del();
    await expect(del()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });
});

/** An update that sets every one of `fields` (a create when the item is missing). */
function setAll(fields: Record<string, unknown>) {
  const entries = Object.entries(fields);
  if (entries.length === 0)
    return { UpdateExpression: 'SET #made = :made', ExpressionAttributeNames: { '#made': 'made' }, ExpressionAttributeValues: { ':made': true } };
  return {
    UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
    ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
  };
}
