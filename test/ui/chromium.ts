/** The system Chromium the browser tests and the screenshot script drive (no vitest imports here). */
import { existsSync } from 'node:fs';

/** The system Chromium (Debian's `chromium` package; CHROMIUM_PATH overrides). */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter(Boolean) as string[];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium found (tried ${candidates.join(', ')}): apt-get install -y chromium, or set CHROMIUM_PATH`);
  return found;
}
