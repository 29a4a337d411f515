import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** A promise with its resolve exposed: hold a step until the test lets it go. */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** Makes a deferred promise. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Holds the next request of a real client whose input matches `match` until `release()` is
 * called; `reached` resolves when it is being held. Drives a race into one exact interleaving.
 */
export function gateNext(client: DynamoDBClient, match: (commandName: string, input: Record<string, unknown>) => boolean) {
  const reached = deferred();
  const open = deferred();
  let armed = true;
  const name = `gate-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (armed && match(String(context.commandName), args.input as Record<string, unknown>)) {
        armed = false;
        reached.resolve();
        await open.promise;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    reached: reached.promise,
    release: () => {
      open.resolve();
      client.middlewareStack.remove(name);
    },
  };
}
