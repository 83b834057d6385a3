import { createHash } from 'node:crypto';
import { TREND_LEGEND_STYLE } from './trend-chart.svg';

/**
 * The page's one stylesheet and the Content-Security-Policy that allows exactly it: the page carries
 * producer-supplied text, so beyond escaping it is served where injected markup can do nothing (no
 * script, no `style` attribute, no frame, forms only to itself).
 */
export const CENTER_PAGE_STYLE = `
:root { color-scheme: light; }
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.2rem 1.6rem; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 1.5rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1rem; margin: .8rem 0 .3rem; }
.meta { color: #555; margin: .2rem 0 1rem; }
.tiles { display: flex; gap: .6rem; flex-wrap: wrap; margin-bottom: .6rem; }
.tile { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .4rem .8rem; min-width: 7.5rem; }
.tile b { display: block; font-size: 1.5rem; }
.tile span { color: #555; }
.panel { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .6rem .9rem; margin-bottom: .8rem; overflow-x: auto; }
.cols { display: flex; gap: .8rem; flex-wrap: wrap; align-items: flex-start; }
.cols > .panel { flex: 1 1 36rem; min-width: 0; }
.cols > #store { flex: 0 1 29rem; }
table { border-collapse: collapse; margin: .3rem 0 .6rem; background: #fff; }
th, td { border: 1px solid #ddd; padding: .2rem .45rem; text-align: right; vertical-align: top; }
th { text-align: left; }
td:first-child { text-align: left; }
td.text { text-align: left; max-width: 38rem; overflow-wrap: anywhere; }
td.key { text-align: left; min-width: 11rem; max-width: 22rem; overflow-wrap: anywhere; }
td.id { text-align: left; white-space: nowrap; }
td.reason { min-width: 16rem; }
thead { background: #f1f1f1; }
code { font: 12px ui-monospace, monospace; overflow-wrap: anywhere; }
.warn { color: #b00020; }
.muted { color: #666; }
small { font-weight: normal; color: #555; }
.badge { display: inline-block; white-space: nowrap; border-radius: 3px; padding: 0 .3rem; font: 11px ui-monospace, monospace; color: #fff; background: #666; }
.s-OK, .s-COMPLETED { background: #2e7d32; }
.s-SKIPPED { background: #689f38; }
.s-DUPLICATE { background: #1565c0; }
.s-IN_PROGRESS { background: #6a1b9a; }
.s-FAILED, .s-ERROR { background: #c62828; }
.s-INVALID { background: #ef6c00; }
.s-UNKNOWN, .s-NOT_SUPPORTED { background: #757575; }
.legend { color: #555; }
.legend i { display: inline-block; width: .7rem; height: .7rem; margin: 0 .2rem 0 .6rem; vertical-align: -1px; }
${TREND_LEGEND_STYLE}
svg.trend { display: block; background: #fff; border: 1px solid #e3e3e3; }
svg.trend text { font: 10px system-ui, sans-serif; fill: #666; }
form { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
input[type=text] { width: 24rem; max-width: 100%; font: 13px ui-monospace, monospace; padding: .2rem .3rem; }
select, button { font: inherit; padding: .15rem .4rem; }
section[data-event-type] { border-top: 2px solid #e0e0e0; margin-top: 1rem; }
`;

/** `'sha256-...'`: the hash under which the CSP allows {@link CENTER_PAGE_STYLE}. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(CENTER_PAGE_STYLE).digest('base64')}'`;

/** The `Content-Security-Policy` of the page. */
export const CENTER_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${STYLE_HASH}`,
  "img-src 'none'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
