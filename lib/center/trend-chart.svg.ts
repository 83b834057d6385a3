import { CenterTrend, TREND_SERIES } from './idempotency-center.api';

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

/** Stack order, bottom up: each layer's colour and the series it adds up. */
const LAYERS = [
  { name: 'handled', colour: '#2e7d32', series: ['handled'] },
  { name: 'skipped', colour: '#9ccc65', series: ['skipped'] },
  { name: 'duplicates', colour: '#1565c0', series: ['duplicates', 'inFlight'] },
  { name: 'failed', colour: '#c62828', series: ['failed'] },
  { name: 'invalid', colour: '#ef6c00', series: ['invalid'] },
] as const;

/** The legend's markup, and its colours for the page's stylesheet. */
export const TREND_LEGEND = `<div class="legend">${LAYERS.map(({ name }) => `<i class="k-${name}"></i>${name}`).join('')}</div>`;
export const TREND_LEGEND_STYLE = LAYERS.map(
  ({ name, colour }) => `.k-${name} { background: ${colour}; }`,
).join('\n');

export function renderTrendChart(trend: CenterTrend): string {
  const minutes = trend.handled.length;
  const from = Date.parse(trend.from);
  // Each minute's count of each layer, bottom up.
  const counts = Array.from({ length: minutes }, (_, i) =>
    LAYERS.map(({ series }) => series.reduce((sum, name) => sum + trend[name][i], 0)),
  );
  const max = Math.max(1, ...counts.map((layers) => layers.reduce((sum, count) => sum + count, 0)));
  const width = LEFT + minutes * (BAR + GAP) + 30;
  const plot = HEIGHT - TOP - BOTTOM;
  let bars = '';
  for (const [i, layers] of counts.entries()) {
    if (layers.every((count) => count === 0)) continue;
    const minute = new Date(from + i * 60_000);
    let y = HEIGHT - BOTTOM;
    let rects = '';
    const parts: string[] = [];
    for (const [l, count] of layers.entries()) {
      if (count === 0) continue;
      const h = Math.max(1, Math.round((count / max) * plot));
      y -= h;
      rects += `<rect x="${LEFT + i * (BAR + GAP)}" y="${y}" width="${BAR}" height="${h}" fill="${LAYERS[l].colour}"/>`;
      parts.push(`${count} ${LAYERS[l].name}`);
    }
    const data = TREND_SERIES.map((series) => ` data-${kebab(series)}="${trend[series][i]}"`).join('');
    bars += `<g data-minute="${minute.toISOString()}"${data}><title>${hhmm(minute)} UTC: ${parts.join(', ')}</title>${rects}</g>`;
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
    bars +
    '</svg>'
  );
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

function hhmm(date: Date): string {
  return date.toISOString().slice(11, 16);
}
