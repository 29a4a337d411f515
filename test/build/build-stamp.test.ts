import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildStale, type BuildStep } from '../../scripts/build-stamp.mjs';

// The freshness check `npm run build` (scripts/build.mjs) runs before each step, on a small
// project in a temporary folder: a `compile` step that concatenates src/ into out/.

const TMP = mkdtempSync(join(tmpdir(), 'fenceq-build-stamp-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

let projects = 0;

/** A fresh project: src/a.ts and src/b.ts, its stamp file, and a step that counts its runs. */
function project() {
  const root = join(TMP, `p${++projects}`);
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'lib'), { recursive: true });
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(root, 'lib', 'c.ts'), 'export const c = 3;\n');
  const runs = { compile: 0, pack: 0 };
  const concat = (from: string, to: string) => {
    mkdirSync(join(root, 'out'), { recursive: true });
    const text = ['a.ts', 'b.ts', 'c.ts'].flatMap((f) => (existsSync(join(root, from, f)) ? [readFileSync(join(root, from, f), 'utf8')] : []));
    writeFileSync(join(root, 'out', to), text.join(''));
  };
  const compile: BuildStep = { name: 'compile', inputs: ['src', 'config.json'], outputs: ['out/src.js'], run: () => (runs.compile++, concat('src', 'src.js')) };
  const pack: BuildStep = { name: 'pack', inputs: ['lib'], outputs: ['out/lib.js'], run: () => (runs.pack++, concat('lib', 'lib.js')) };
  const stampFile = join(root, 'out', '.build-stamp.json');
  const build = (steps: BuildStep[] = [compile], force = false) => buildStale({ root, stampFile, steps, force });
  const stamps = () => JSON.parse(readFileSync(stampFile, 'utf8')) as Record<string, unknown>;
  return { root, runs, compile, pack, stampFile, build, stamps };
}

describe('build freshness (scripts/build-stamp.mjs)', () => {
  it('builds a step that has no stamp, then skips it while nothing changed', async () => {
    const p = project();
    expect(await p.build()).toEqual({ built: ['compile'], upToDate: [] });
    expect(await p.build()).toEqual({ built: [], upToDate: ['compile'] });
    expect(p.runs.compile).toBe(1);
  });

  it('rebuilds a step when one of its source files changed', async () => {
    const p = project();
    await p.build();
    writeFileSync(join(p.root, 'src', 'b.ts'), 'export const b = 20;\n');
    expect(await p.build()).toEqual({ built: ['compile'], upToDate: [] });
    expect(readFileSync(join(p.root, 'out', 'src.js'), 'utf8')).toContain('b = 20');
    expect(p.runs.compile).toBe(2);
  });

  it('rebuilds a step when a source file is added, or an input that was absent appears', async () => {
    const p = project();
    await p.build();
    writeFileSync(join(p.root, 'src', 'c.ts'), 'export const c = 3;\n');
    expect((await p.build()).built).toEqual(['compile']);
    writeFileSync(join(p.root, 'config.json'), '{}\n');
    expect((await p.build()).built).toEqual(['compile']);
    expect(p.runs.compile).toBe(3);
  });

  it('keeps a step up to date when a source file is only touched (same content, new mtime)', async () => {
    const p = project();
    await p.build();
    utimesSync(join(p.root, 'src', 'a.ts'), new Date(), new Date(Date.now() + 60_000));
    expect(await p.build()).toEqual({ built: [], upToDate: ['compile'] });
  });

  it('rebuilds a step when the stamp file is missing', async () => {
    const p = project();
    await p.build();
    rmSync(p.stampFile);
    expect((await p.build()).built).toEqual(['compile']);
    expect(p.runs.compile).toBe(2);
  });

  it('rebuilds a step whose outputs were edited or deleted since it ran', async () => {
    const p = project();
    await p.build();
    writeFileSync(join(p.root, 'out', 'src.js'), 'edited by hand');
    expect((await p.build()).built).toEqual(['compile']);
    rmSync(join(p.root, 'out', 'src.js'));
    expect((await p.build()).built).toEqual(['compile']);
    expect(p.runs.compile).toBe(3);
  });

  it('leaves no stamp for a step that failed, so the next build runs it again', async () => {
    const p = project();
    await p.build();
    const broken: BuildStep = {
      ...p.compile,
      run: () => {
        throw new Error('tsc: error TS2322');
      },
    };
    await expect(p.build([broken], true)).rejects.toThrow('TS2322');
    expect(p.stamps()).not.toHaveProperty('compile');
    expect((await p.build()).built).toEqual(['compile']);
    expect(p.stamps()).toHaveProperty('compile');
  });

  it('rebuilds only the step whose inputs changed, and every step with force', async () => {
    const p = project();
    expect((await p.build([p.compile, p.pack])).built).toEqual(['compile', 'pack']);
    writeFileSync(join(p.root, 'lib', 'c.ts'), 'export const c = 30;\n');
    expect(await p.build([p.compile, p.pack])).toEqual({ built: ['pack'], upToDate: ['compile'] });
    expect(await p.build([p.compile, p.pack], true)).toEqual({ built: ['compile', 'pack'], upToDate: [] });
    expect(p.runs).toEqual({ compile: 2, pack: 3 });
  });
});
