import { readFileSync } from 'node:fs';

/** fenceq's version, from its package.json (src/cli/ in a clone, dist/src/cli/ in the package). */
export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'));
      // Checked in place, not with isRecord: this module imports nothing of fenceq (a test runs a copy of it alone).
      if (
        typeof pkg === 'object' &&
        pkg !== null &&
        'name' in pkg &&
        pkg.name === 'fenceq' &&
        'version' in pkg &&
        typeof pkg.version === 'string' &&
        pkg.version
      ) {
        return pkg.version;
      }
    } catch {
      // not this one
    }
  }
  return 'unknown';
}
