/** Pure text helpers shared by the CLI, the dashboard and the local stack: durations, instants and aligned tables. */

/** A duration in ms as a short human string: `850ms`, `12s`, `3m 05s`, `2h 10m`, `3d 4h`. */
export function formatDuration(ms: number): string {
  const abs = Math.abs(Math.round(ms));
  if (abs < 1_000) return `${abs}ms`;
  const s = Math.floor(abs / 1_000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** An epoch-ms instant as UTC `YYYY-MM-DD HH:MM:SSZ` (seconds are enough for an operator). */
export function formatInstant(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
}

/** Milliseconds per unit of a duration. */
const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a duration such as `500ms`, `30s`, `5m`, `2h`, `1d` or a bare number of ms. */
export function parseDuration(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) return undefined;
  const unit = DURATION_UNITS[m[2] ?? 'ms'];
  if (unit === undefined) return undefined;
  const value = Math.round(Number(m[1]) * unit);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Renders rows as a left-aligned text table with a header line; numbers are right-aligned. */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...cells.map(line)].join('\n');
}

/** Renders label/value pairs as two aligned columns. */
export function renderFields(fields: readonly (readonly [string, string | number | undefined])[]): string {
  const shown = fields.flatMap(([k, v]) => (v === undefined ? [] : [[k, v] as const]));
  const width = Math.max(0, ...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}  ${v}`).join('\n');
}

/** Cuts text to `max` characters on one line, with an ellipsis. */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
