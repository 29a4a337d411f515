// Build only what changed: each build step records, once it has succeeded, a digest of its inputs
// and of the outputs it wrote in a stamp file; the next build skips a step whose inputs and
// outputs still match. The stamp of a step is removed before the step runs, so a failed or
// interrupted step leaves none, and outputs edited or deleted by hand count as stale.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Every file under `path` (a file or a folder), relative to `root`, in a stable order; none when `path` does not exist. */
function filesUnder(root, path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => (e.isDirectory() || e.isFile() ? filesUnder(root, `${path}/${e.name}`) : []));
}

/** A SHA-256 over the files under `paths` (files or folders relative to `root`): each file's path and content. */
function digestFiles(root, paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(`${path}\0`);
    for (const file of filesUnder(root, path))
      hash
        .update(`${file}\0`)
        .update(readFileSync(join(root, file)))
        .update('\0');
  }
  return hash.digest('hex');
}

/** The stamps in `stampFile` by step name; none when the file is missing or unreadable. */
function readStamps(stampFile) {
  try {
    const stamps = JSON.parse(readFileSync(stampFile, 'utf8'));
    return stamps !== null && typeof stamps === 'object' && !Array.isArray(stamps) ? stamps : {};
  } catch {
    return {};
  }
}

/** Writes `stamps` whole (a temporary file renamed over the old one, so a reader never sees half of it). */
function writeStamps(stampFile, stamps) {
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(`${stampFile}.tmp`, `${JSON.stringify(stamps, null, 2)}\n`);
  renameSync(`${stampFile}.tmp`, stampFile);
}

/**
 * Runs each step of `steps` ({ name, inputs, outputs, run }: paths relative to `root`) whose stamp
 * in `stampFile` does not match its inputs and outputs, or every step with `force`; returns the
 * names built and the names up to date. A step that throws stops the build with no stamp of its own.
 */
export async function buildStale({ root, stampFile, steps, force = false }) {
  const stamps = readStamps(stampFile);
  const built = [];
  const upToDate = [];
  for (const step of steps) {
    const inputs = digestFiles(root, step.inputs);
    const stamp = stamps[step.name];
    if (!force && stamp?.inputs === inputs && stamp.outputs === digestFiles(root, step.outputs)) {
      upToDate.push(step.name);
      continue;
    }
    delete stamps[step.name];
    writeStamps(stampFile, stamps);
    await step.run();
    stamps[step.name] = { inputs, outputs: digestFiles(root, step.outputs) };
    writeStamps(stampFile, stamps);
    built.push(step.name);
  }
  return { built, upToDate };
}
