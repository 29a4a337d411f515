import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Counts a real client's requests by command name (Query, UpdateItem, ...); `reset()` starts again. */
export function countRequests(client: DynamoDBClient): { readonly counts: Record<string, number>; reset(): void } {
  const state = { counts: {} as Record<string, number> };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName).replace(/Command$/, '');
      state.counts[name] = (state.counts[name] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: `count-${Math.random()}` },
  );
  return {
    get counts() {
      return state.counts;
    },
    reset: () => {
      state.counts = {};
    },
  };
}
