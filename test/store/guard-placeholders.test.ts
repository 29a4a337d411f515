/**
 * allOf and guarded (src/store/core/guards.ts) merge placeholder maps: one placeholder may appear in
 * several parts only with the same meaning, never silently take the last part's value.
 */
import { describe, expect, it } from 'vitest';
import { allOf, atGeneration, guarded, PlaceholderClashError, type Guard } from '../../src/store/core/guards.js';

const seenAt = (n: number): Guard => ({
  ConditionExpression: '#g = :seen',
  ExpressionAttributeNames: { '#g': 'leaseGeneration' },
  ExpressionAttributeValues: { ':seen': n },
});

describe('placeholders in merged expressions', () => {
  it('allOf refuses two guards that give one value placeholder different values', () => {
    const clash = () => allOf(atGeneration(3, 'inc-a'), seenAt(4));
    expect(clash).toThrow(PlaceholderClashError);
    expect(clash).toThrow(/:seen means both 3 and 4/);
  });

  it('allOf refuses two guards that give one name placeholder different attributes', () => {
    const other: Guard = { ConditionExpression: 'attribute_exists(#g)', ExpressionAttributeNames: { '#g': 'group' }, ExpressionAttributeValues: {} };
    expect(() => allOf(seenAt(3), other)).toThrow(PlaceholderClashError);
  });

  it('allOf keeps a placeholder two guards give the same meaning', () => {
    const g = allOf(atGeneration(3, 'inc-a'), seenAt(3));
    expect(g.ExpressionAttributeValues[':seen']).toBe(3);
    expect(g.ConditionExpression).toContain(' AND ');
  });

  it("guarded refuses a guard whose placeholder clashes with the write's", () => {
    const write = { UpdateExpression: 'SET #g = :seen', ExpressionAttributeNames: { '#g': 'leaseGeneration' }, ExpressionAttributeValues: { ':seen': 9 } };
    expect(() => guarded(write, seenAt(8))).toThrow(PlaceholderClashError);
    expect(guarded(write, seenAt(9)).ExpressionAttributeValues).toEqual({ ':seen': 9 });
  });
});
