// Pieces several pages share: the site picker, fleet-state names, small charts with text equivalents.
import { get } from '../api.js';
import { el, labelled, select, svg } from '../dom.js';

export const stateNames = { ok: 'ok', unknown: 'unknown', warning: 'warning', alert: 'alert', missing: 'missing' };

/** The state a person reads: an alert whose finding is `missing` is shown as "missing". */
export function displayState(row) {
  if (!row) return 'not heard';
  const missing = (row.findings ?? []).find((finding) => finding.check === 'missing' && finding.level === 'alert');
  return missing ? 'missing' : row.state;
}

/** A site picker; calls `onChange(site)` with the chosen site. Returns {node, sites}. */
export async function sitePicker(id, onChange, { allowAll = false } = {}) {
  const sites = await get('/v1/sites');
  const options = sites.map((site) => ({ value: site.id, text: `${site.name} (major ${site.major})` }));
  if (allowAll) options.unshift({ value: '', text: 'All sites' });
  const control = select(id, options, allowAll ? '' : sites[0]?.id);
  control.addEventListener('change', () => onChange(sites.find((site) => String(site.id) === control.value) ?? null));
  return { node: labelled('Site', control), sites, control };
}

/**
 * A horizontal bar chart in SVG with its numbers as a table beside it (the text equivalent).
 * `rows`: [{label, value}], `unit`: shown after each value; bars scale from `floor` to the largest value.
 */
export function barChart(title, rows, { unit = '', floor = 0 } = {}) {
  const width = 240;
  const barHeight = 18;
  const height = Math.max(1, rows.length) * (barHeight + 6);
  const maximum = Math.max(floor + 1, ...rows.map((row) => row.value));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': title, class: 'chart' },
    rows.map((row, index) => {
      const span = Math.max(2, ((row.value - floor) / (maximum - floor)) * (width - 10));
      return svg('rect', { x: 0, y: index * (barHeight + 6), width: span.toFixed(1), height: barHeight, class: 'bar' });
    }));
  const text = el('table', { class: 'chart-text' },
    el('caption', { text: title }),
    el('tbody', {}, rows.map((row) => el('tr', {}, el('th', { scope: 'row', text: row.label }), el('td', { text: `${row.value.toFixed(1)} ${unit}` })))));
  return el('figure', { class: 'chart-figure' }, chart, text);
}

/** A line of readings over time in SVG, with the readings as a table. `points`: [{time, value}]. */
export function lineChart(title, points, { unit = '' } = {}) {
  const width = 260;
  const height = 80;
  const times = points.map((point) => point.time);
  const values = points.map((point) => point.value);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const [v0, v1] = [Math.min(...values), Math.max(...values)];
  const x = (t) => (t1 > t0 ? ((t - t0) / (t1 - t0)) * (width - 10) + 5 : width / 2);
  const y = (v) => (v1 > v0 ? height - 5 - ((v - v0) / (v1 - v0)) * (height - 10) : height / 2);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': title, class: 'chart' },
    svg('polyline', { points: points.map((point) => `${x(point.time).toFixed(1)},${y(point.value).toFixed(1)}`).join(' '), class: 'line' }));
  const text = el('table', { class: 'chart-text' },
    el('caption', { text: title }),
    el('tbody', {}, points.slice(-10).map((point) => el('tr', {},
      el('th', { scope: 'row', text: new Date(point.time * 1000).toISOString().slice(11, 19) }),
      el('td', { text: `${point.value} ${unit}` })))));
  return el('figure', { class: 'chart-figure' }, chart, text);
}

/** Runs `task` now and every `seconds`, and returns a stop function. */
export function every(seconds, task) {
  task();
  const timer = setInterval(task, seconds * 1000);
  return () => clearInterval(timer);
}
