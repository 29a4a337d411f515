import { expect } from 'vitest';

/** An error class, for {@link rejectedWith} and {@link thrownWith}. */
type ErrorClass<E> = abstract new (...args: never[]) => E;

/**
 * Awaits `p`, asserts it rejects with an instance of `cls` (not just "something"), and returns the
 * error so the test can check its fields: `expect(await rejectedWith(p, ValidationError)).toMatchObject({ field })`.
 */
export async function rejectedWith<E>(p: Promise<unknown>, cls: ErrorClass<E>): Promise<E> {
  const err = await p.then(
    () => {
      throw new Error(`expected a rejection with ${cls.name}, but the promise resolved`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(cls);
  return err as E;
}

/** Calls `fn`, asserts it throws an instance of `cls`, and returns the error (see {@link rejectedWith}). */
export function thrownWith<E>(fn: () => unknown, cls: ErrorClass<E>): E {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  if (err === undefined) throw new Error(`expected a throw of ${cls.name}, but it returned`);
  expect(err).toBeInstanceOf(cls);
  return err as E;
}
