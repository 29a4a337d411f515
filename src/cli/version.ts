import { readFileSync } from 'node:fs';

/** fenceq's version, from its package.json (src/cli/ in a clone, dist/src/cli/ in the package). */
export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'fenceq' && pkg.version) return pkg.version;
    } catch {
      // not this one
    }
  }
  return 'unknown';
}
