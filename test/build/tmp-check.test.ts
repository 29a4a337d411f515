import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// CI's temp-folder check (scripts/tmp-check.mjs), run as CI runs it, on a temp folder of its own
// (TMPDIR pointed at a fresh folder), so what other runs do to the real one cannot matter.

const SCRIPT = fileURLToPath(new URL('../../scripts/tmp-check.mjs', import.meta.url));
const ROOT = mkdtempSync(join(tmpdir(), 'fenceq-tmp-check-'));
afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

let folders = 0;

/** A fresh temp folder holding `entries`, and the check run against it. */
function folder(...entries: string[]) {
  const dir = join(ROOT, `t${++folders}`);
  mkdirSync(dir);
  for (const e of entries) writeFileSync(join(dir, e), '');
  const snapshot = join(ROOT, `snapshot-${folders}.json`);
  const check = (command: string, file = snapshot) => {
    const r = spawnSync(process.execPath, [SCRIPT, command, file], { env: { ...process.env, TMPDIR: dir }, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  return { dir, snapshot, check };
}

describe('scripts/tmp-check.mjs', () => {
  it('passes when the folder holds what it held at the snapshot, or less', () => {
    const t = folder('kept', 'gone');
    expect(t.check('snapshot').code).toBe(0);
    expect(t.check('compare')).toMatchObject({ code: 0 });
    rmSync(join(t.dir, 'gone'));
    expect(t.check('compare').code).toBe(0);
  });

  it('fails naming every entry the run left, files and folders', () => {
    const t = folder('kept');
    t.check('snapshot');
    mkdirSync(join(t.dir, 'fenceq-cdk-abc123'));
    writeFileSync(join(t.dir, 'fenceq-health-x'), '');
    const out = t.check('compare');
    expect(out.code).toBe(1);
    expect(out.stderr.split('\n').filter((l) => l.startsWith('  '))).toEqual(['  fenceq-cdk-abc123', '  fenceq-health-x']);
  });

  it('does not count its own snapshot file when it is kept in the temp folder', () => {
    const t = folder();
    const inside = join(t.dir, 'tmp-check-before.json');
    t.check('snapshot', inside);
    expect(t.check('compare', inside).code).toBe(0);
  });

  it('refuses a missing snapshot and a usage error with exit 2', () => {
    const t = folder();
    expect(t.check('compare').code).toBe(2);
    expect(t.check('diff').code).toBe(2);
  });
});
