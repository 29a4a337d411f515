/**
 * The emulators (dynalite, fauxqs) are optional peer dependencies: only `fenceq start` and
 * `fenceq/testing` need them. Checking for them before any child process starts turns a missing
 * one into one line that says what to install, instead of a stack trace or a half-started stack.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FenceqError } from '../errors.js';

/** A package that only some of fenceq needs is not installed. */
export class MissingPackageError extends FenceqError {
  override name = 'MissingPackageError';
  /** The packages to install. */
  readonly packages: readonly string[];
  constructor(what: string, packages: readonly string[], options?: { cause?: unknown }) {
    super(
      `${what} needs ${packages.join(' and ')}, which ${packages.length > 1 ? 'are' : 'is'} not installed: run \`npm i -D ${packages.join(' ')}\``,
      options,
    );
    this.packages = packages;
  }
}

/** Whether `name` is installed where this module resolves packages (any node_modules above it). */
function isInstalled(name: string, from: string = dirname(fileURLToPath(import.meta.url))): boolean {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** Throws MissingPackageError naming every one of `names` that is not installed. */
export function requirePackages(what: string, names: readonly string[]): void {
  const missing = names.filter((n) => !isInstalled(n));
  if (missing.length > 0) throw new MissingPackageError(what, missing);
}
