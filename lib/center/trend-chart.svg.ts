import type { CenterTrend } from './idempotency-center.api';

/**
 * One event type's last hour as stacked bars of inline SVG, one per minute; each minute's numbers are
 * also `data-*` attributes and a `<title>`, for tests and tooltips.
 */

const BAR = 13;
const GAP = 3;
const HEIGHT = 84;
const TOP = 12;
const BOTTOM = 14;
const LEFT = 4;

/** Stack order, bottom up, with their colours (the legend's). */
const LAYERS = [
  { name: 'handled', colour: '#2e7d32', of: (t: CenterTrend, i: number) => t.handled[i] },
  { name: 'skipped', colour: '#9ccc65', of: (t: CenterTrend, i: number) => t.skipped[i] },
  {
    name: 'duplicates',
    colour: '#1565c0',
    of: (t: CenterTrend, i: number) => t.duplicates[i] + t.inFlight[i],
  },
  { name: 'failed', colour: '#c62828', of: (t: CenterTrend, i: number) => t.failed[i] },
  { name: 'invalid', colour: '#ef6c00', of: (t: CenterTrend, i: number) => t.invalid[i] },
] as const;

export function renderTrendChart(trend: CenterTrend): string {
  const minutes = trend.handled.length;
  const from = Date.parse(trend.from);
  const totals = Array.from({ length: minutes }, (_, i) =>
    LAYERS.reduce((sum, layer) => sum + layer.of(trend, i), 0),
  );
  const max = Math.max(1, ...totals);
  const width = LEFT + minutes * (BAR + GAP) + 30;
  const plot = HEIGHT - TOP - BOTTOM;
  const bars: string[] = [];
  for (let i = 0; i < minutes; i++) {
    if (totals[i] === 0) continue;
    const minute = new Date(from + i * 60_000);
    const x = LEFT + i * (BAR + GAP);
    let y = HEIGHT - BOTTOM;
    const rects: string[] = [];
    const parts: string[] = [];
    for (const layer of LAYERS) {
      const count = layer.of(trend, i);
      if (count === 0) continue;
      const h = Math.max(1, Math.round((count / max) * plot));
      y -= h;
      rects.push(`<rect x="${x}" y="${y}" width="${BAR}" height="${h}" fill="${layer.colour}"/>`);
      parts.push(`${count} ${layer.name}`);
    }
    bars.push(
      `<g data-minute="${minute.toISOString()}" data-handled="${trend.handled[i]}" data-skipped="${trend.skipped[i]}" ` +
        `data-duplicates="${trend.duplicates[i]}" data-in-flight="${trend.inFlight[i]}" data-failed="${trend.failed[i]}" ` +
        `data-invalid="${trend.invalid[i]}"><title>${hhmm(minute)} UTC: ${parts.join(', ')}</title>${rects.join('')}</g>`,
    );
  }
  const last = new Date(from + (minutes - 1) * 60_000);
  const axis = HEIGHT - BOTTOM;
  return (
    `<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" ` +
    `viewBox="0 0 ${width} ${HEIGHT}" role="img" aria-label="records per minute, last ${minutes} minutes">` +
    `<line x1="${LEFT}" y1="${axis + 0.5}" x2="${LEFT + minutes * (BAR + GAP)}" y2="${axis + 0.5}" stroke="#bbb"/>` +
    `<text x="${LEFT}" y="9">max ${max}/min</text>` +
    `<text x="${LEFT}" y="${HEIGHT - 2}">${hhmm(new Date(from))}</text>` +
    `<text x="${LEFT + (minutes / 2) * (BAR + GAP)}" y="${HEIGHT - 2}" text-anchor="middle">${hhmm(new Date(from + (minutes / 2) * 60_000))}</text>` +
    `<text x="${LEFT + minutes * (BAR + GAP)}" y="${HEIGHT - 2}" text-anchor="end">${hhmm(last)} UTC</text>` +
    bars.join('') +
    '</svg>'
  );
}

function hhmm(date: Date): string {
  return date.toISOString().slice(11, 16);
}
