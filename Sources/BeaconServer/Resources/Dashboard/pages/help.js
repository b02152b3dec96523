// Help requests: the live queue of visitors who asked for help, with acknowledge / reached /
// done / cancel for staff, and response-time figures as a chart with its table.
import { followStream, get, request } from '../api.js';
import { clear, el, formatTime, message, table } from '../dom.js';
import { barChart, sitePicker } from './common.js';

const live = ['open', 'acknowledged', 'reached'];

/** The buttons a state allows; the server decides who may press them (it refuses with 403). */
function actionsFor(item) {
  switch (item.state) {
    case 'open': return ['acknowledge', 'cancel'];
    case 'acknowledged': return ['reached', 'done', 'cancel'];
    case 'reached': return ['done', 'cancel'];
    default: return [];
  }
}

function render(container, { session }) {
  const queueHolder = el('div', { id: 'help-queue' });
  const metricsHolder = el('div', { id: 'help-metrics' });
  const status = el('p', { class: 'note', 'aria-live': 'polite', id: 'help-stream-state' });
  const result = el('p', { 'aria-live': 'polite' });
  let siteID = null;
  let stopStream = null;

  async function act(item, action) {
    try {
      await request('POST', `/v1/help-requests/${item.id}/${action}`);
      clear(result).append(message(`Request ${item.id}: ${action} recorded.`));
      await refresh();
    } catch (error) {
      clear(result).append(message(`Request ${item.id}: ${error.message}`, 'error'));
    }
  }

  async function showQueue() {
    const query = new URLSearchParams({ limit: '500' });
    if (siteID) query.set('site', String(siteID));
    const requests = await get(`/v1/help-requests?${query}`);
    const rows = requests.filter((item) => live.includes(item.state)).map((item) => {
      const buttons = session.canOperate
        ? actionsFor(item).map((action) => {
          const button = el('button', { type: 'button', class: `help-${action}`, text: action[0].toUpperCase() + action.slice(1),
            'aria-label': `${action} help request ${item.id}` });
          button.addEventListener('click', () => act(item, action));
          return button;
        })
        : [];
      const distance = item.helperDistance ?? item.gatewayDistance;
      return el('tr', { 'data-help': item.id, 'data-state': item.state },
        el('td', { text: item.id }),
        el('td', { class: 'label', text: item.name ?? '(no name)' }),
        el('td', { class: 'state', text: item.state }),
        el('td', { class: 'label', text: item.room ?? '–' }),
        el('td', { text: distance ? (typeof distance.distance === 'number' ? `${distance.distance.toFixed(1)} m, ${distance.proximity}` : distance.proximity) : '–' }),
        el('td', { class: 'label', text: item.helper?.name ?? '–' }),
        el('td', { text: formatTime(item.createdAt) }),
        el('td', { class: 'actions' }, buttons));
    });
    clear(queueHolder).append(rows.length
      ? table('Open help requests, oldest first', ['#', 'Visitor', 'State', 'Where', 'Distance', 'Helper', 'Asked', ''], rows, { id: 'help-table' })
      : message('Nobody is waiting for help.'));
  }

  async function showMetrics() {
    const query = siteID ? `?site=${siteID}` : '';
    const metrics = await get(`/v1/help-requests/metrics${query}`);
    const figures = metrics.sites.find((site) => !siteID || site.siteID === siteID);
    if (!figures) { clear(metricsHolder).append(message('No help requests yet.')); return; }
    const rows = [
      { label: 'Filed to acknowledged', value: figures.meanSecondsToAcknowledge },
      { label: 'Acknowledged to reached', value: figures.meanSecondsToReach },
    ].filter((row) => typeof row.value === 'number');
    const counts = table('Help requests by outcome', ['Filed', 'Acknowledged', 'Reached', 'Done', 'Cancelled', 'Success rate'], [
      el('tr', {}, [figures.filed, figures.acknowledged, figures.reached, figures.done, figures.cancelled,
        typeof figures.successRate === 'number' ? `${(figures.successRate * 100).toFixed(0)} %` : '–'].map((value) => el('td', { text: value }))),
    ], { id: 'help-counts' });
    clear(metricsHolder).append(el('h3', { text: 'Response times' }),
      rows.length ? barChart('Mean response times', rows, { unit: 's' }) : message('No response times yet.'), counts);
  }

  async function refresh() {
    await Promise.all([showQueue(), showMetrics()]);
  }

  function follow() {
    stopStream?.();
    stopStream = followStream((lastID) => {
      const params = new URLSearchParams();
      if (siteID) params.set('site', String(siteID));
      if (lastID !== null) params.set('after', String(lastID));
      return `/v1/help-requests/events?${params}`;
    }, () => refresh().catch(() => {}),
      { onState: (state) => { status.textContent = `Queue: ${state}`; } });
  }

  (async () => {
    try {
      const picker = await sitePicker('help-site', (site) => { siteID = site?.id ?? null; refresh(); follow(); }, { allowAll: true });
      container.append(picker.node, status, queueHolder, result, metricsHolder);
      await refresh();
      follow();
    } catch (error) {
      container.append(message(`Could not load help requests: ${error.message}`, 'error'));
    }
  })();
  return () => stopStream?.();
}

export default { id: 'help', title: 'Help requests', render };
