// What a function's bundle has in place of a fenceq operation or facade method it never calls
// (ABSENT and ABSENT_METHODS in scripts/bundle-functions.mjs): a stub that throws, naming the
// operation and the function.
// test/functions/bundles.test.ts invokes every operation of every function's bundle, so a stub
// on a path that runs fails there.

/** Thrown by an operation left out of this function's bundle. */
export class AbsentFromBundleError extends Error {
  constructor(operation, fn) {
    super(`${operation} is not part of fenceq's ${fn} function bundle (scripts/bundle-functions.mjs: ABSENT, ABSENT_METHODS)`);
    this.name = 'AbsentFromBundleError';
  }
}

/** A stand-in for `operation` that throws {@link AbsentFromBundleError}. */
export const absent = (operation, fn) => () => {
  throw new AbsentFromBundleError(operation, fn);
};
