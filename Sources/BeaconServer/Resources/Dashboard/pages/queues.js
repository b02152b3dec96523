// Queues: who waits now at each queue, and the waits of the last hours as a chart with its table.
import { get } from '../api.js';
import { clear, el, message, svg, table } from '../dom.js';
import { every, sitePicker } from './common.js';

/** p50 and p90 wait per hour as paired bars, with the same figures in a table. */
function hourlyChart(title, hours) {
  const width = 300;
  const height = 100;
  const maximum = Math.max(1, ...hours.map((hour) => hour.p90 ?? hour.p50 ?? 0));
  const slot = width / Math.max(1, hours.length);
  const bars = hours.flatMap((hour, index) => {
    const x = index * slot;
    const scale = (value) => ((value ?? 0) / maximum) * (height - 10);
    return [
      svg('rect', { x: (x + 1).toFixed(1), y: (height - scale(hour.p90)).toFixed(1), width: Math.max(1, slot / 2 - 1).toFixed(1), height: scale(hour.p90).toFixed(1), class: 'bar p90' }),
      svg('rect', { x: (x + slot / 2).toFixed(1), y: (height - scale(hour.p50)).toFixed(1), width: Math.max(1, slot / 2 - 1).toFixed(1), height: scale(hour.p50).toFixed(1), class: 'bar p50' }),
    ];
  });
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': title, class: 'chart' }, bars);
  const minutes = (value) => (typeof value === 'number' ? `${(value / 60).toFixed(1)} min` : '–');
  const text = el('table', { class: 'chart-text' },
    el('caption', { text: title }),
    el('thead', {}, el('tr', {}, ['Hour from', 'Served', 'Left', 'p50 wait', 'p90 wait'].map((heading) => el('th', { scope: 'col', text: heading })))),
    el('tbody', {}, hours.map((hour) => el('tr', {},
      el('th', { scope: 'row', text: new Date(hour.from * 1000).toISOString().slice(0, 16).replace('T', ' ') }),
      el('td', { text: hour.served }), el('td', { text: hour.abandoned }),
      el('td', { text: minutes(hour.p50) }), el('td', { text: minutes(hour.p90) })))));
  return el('figure', { class: 'chart-figure' }, chart, text);
}

function render(container) {
  const holder = el('div', { id: 'queue-list' });
  let siteID = null;

  async function show() {
    const queues = await get(siteID ? `/v1/queues?site=${siteID}` : '/v1/queues');
    if (!queues.length) { clear(holder).append(message('No queues defined (proxima queue create).')); return; }
    const reports = await Promise.all(queues.map((queue) => get(`/v1/queues/${queue.id}?hours=12`)));
    const minutes = (value) => (typeof value === 'number' ? `${(value / 60).toFixed(1)} min` : '–');
    const rows = reports.map((report) => el('tr', { 'data-queue': report.queue.id },
      el('td', { class: 'label', text: report.queue.name }),
      el('td', { class: 'waiting', text: report.live.waiting }),
      el('td', { text: minutes(report.live.longestWait) }),
      el('td', { text: minutes(report.last15Minutes.p50) }),
      el('td', { text: minutes(report.last15Minutes.p90) }),
      el('td', { text: report.last15Minutes.served }),
      el('td', { text: report.last15Minutes.abandoned })));
    const charts = reports.map((report) => el('section', { class: 'queue-history' },
      el('h3', { text: `${report.queue.name}: waits by hour` }),
      report.hours.length ? hourlyChart(`Waits by hour at ${report.queue.name}`, report.hours) : message('No waits recorded yet.')));
    clear(holder).append(
      table('Queues now and in the last 15 minutes', ['Queue', 'Waiting', 'Longest wait', 'p50', 'p90', 'Served', 'Left'], rows, { id: 'queue-table' }),
      ...charts);
  }

  let stop = null;
  (async () => {
    try {
      const picker = await sitePicker('queue-site', (site) => { siteID = site?.id ?? null; show(); }, { allowAll: true });
      container.append(picker.node, holder);
      stop = every(5, () => show().catch((error) => clear(holder).append(message(error.message, 'error'))));
    } catch (error) {
      container.append(message(`Could not load queues: ${error.message}`, 'error'));
    }
  })();
  return () => stop?.();
}

export default { id: 'queues', title: 'Queues', render };
