/** Writes the throughput-against-workers chart as a small standalone SVG (no dependency). */

/** One bar group: a worker count with its jobs/s and the ceiling/3 it is compared to. */
export interface ChartPoint {
  readonly workers: number;
  readonly jobsPerSec: number;
  readonly maxJobsPerSec: number;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Renders jobs/s (bars) beside ceiling/3 (outlined bars) for each worker count. */
export function throughputChart(points: readonly ChartPoint[], subtitle: string): string {
  const W = 640;
  const H = 360;
  const left = 60;
  const bottom = 300;
  const top = 50;
  const max = Math.max(1, ...points.flatMap((p) => [p.jobsPerSec, p.maxJobsPerSec])) * 1.1;
  const y = (v: number) => bottom - ((bottom - top) * v) / max;
  const slot = (W - left - 20) / Math.max(1, points.length);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15">fenceq throughput against workers (jobs/s)</text>`);
  parts.push(`<text x="${W / 2}" y="38" text-anchor="middle" fill="#555">${esc(subtitle)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${Math.round(v)}</text>`);
  }
  points.forEach((p, i) => {
    const x = left + slot * i + slot * 0.15;
    const bw = slot * 0.33;
    parts.push(`<rect x="${x}" y="${y(p.jobsPerSec)}" width="${bw}" height="${bottom - y(p.jobsPerSec)}" fill="#2b6cb0"/>`);
    parts.push(`<text x="${x + bw / 2}" y="${y(p.jobsPerSec) - 4}" text-anchor="middle">${Math.round(p.jobsPerSec)}</text>`);
    parts.push(
      `<rect x="${x + bw + 4}" y="${y(p.maxJobsPerSec)}" width="${bw}" height="${bottom - y(p.maxJobsPerSec)}" fill="none" stroke="#c05621" stroke-width="2" stroke-dasharray="4 3"/>`,
    );
    parts.push(`<text x="${x + bw * 1.5 + 4}" y="${y(p.maxJobsPerSec) - 4}" text-anchor="middle" fill="#c05621">${Math.round(p.maxJobsPerSec)}</text>`);
    parts.push(
      `<text x="${x + bw + 2}" y="${bottom + 18}" text-anchor="middle">${p.workers} worker${p.workers === 1 ? '' : 's'} (${Math.round((100 * p.jobsPerSec) / p.maxJobsPerSec)}%)</text>`,
    );
  });
  parts.push(`<line x1="${left}" x2="${W - 20}" y1="${bottom}" y2="${bottom}" stroke="#333"/>`);
  parts.push(
    `<rect x="${left}" y="${H - 30}" width="12" height="12" fill="#2b6cb0"/><text x="${left + 18}" y="${H - 20}">measured jobs/s (enqueue + lease + ack)</text>`,
  );
  parts.push(
    `<rect x="${left + 300}" y="${H - 30}" width="12" height="12" fill="none" stroke="#c05621" stroke-dasharray="4 3"/><text x="${left + 318}" y="${H - 20}">ceiling / 3 at the same concurrency</text>`,
  );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
