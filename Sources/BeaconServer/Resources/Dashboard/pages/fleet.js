// Fleet: every beacon's health (missing, unregistered, out of place, clone, battery, drift), the
// open alerts with acknowledge buttons for operators, and each beacon's battery readings.
import { followEvents, get, request } from '../api.js';
import { clear, el, formatTime, identity, message, table } from '../dom.js';
import { displayState, every, lineChart, sitePicker } from './common.js';

function render(container, { session }) {
  const status = el('p', { class: 'note', 'aria-live': 'polite' });
  const beaconsHolder = el('div');
  const alertsHolder = el('div');
  const unregisteredHolder = el('div');
  const trendHolder = el('div', { class: 'trend', 'aria-live': 'polite' });
  let chosenTrend = null;
  let stops = [];
  let site = null;

  const stopAll = () => { stops.forEach((stop) => stop()); stops = []; };

  async function refresh() {
    const query = site ? `?site=${site.id}` : '';
    const [fleet, alerts] = await Promise.all([get(`/v1/fleet${query}`), get(`/v1/fleet/alerts${query}`)]);
    drawBeacons(fleet);
    drawAlerts(alerts.alerts);
    drawUnregistered(fleet.unregistered ?? []);
    if (chosenTrend) drawTrend().catch(showError);
    status.textContent = `Fleet as of ${formatTime(fleet.time)} (gateways' clock)`;
  }

  function drawBeacons(fleet) {
    const rows = fleet.beacons.map((row) => {
      const shown = displayState(row);
      const trendButton = el('button', { type: 'button', class: 'link', text: 'Battery trend', 'aria-label': `Battery trend of ${row.label}` });
      trendButton.addEventListener('click', () => { chosenTrend = { key: identity(row), label: row.label }; drawTrend().catch(showError); });
      return el('tr', { 'data-beacon': identity(row), 'data-state': shown },
        el('td', {}, el('span', { class: `badge state-${shown.replace(' ', '-')}`, text: shown })),
        el('td', { class: 'label', text: row.label }),
        el('td', { class: 'identity', text: identity(row) }),
        el('td', { text: formatTime(row.lastHeard) }),
        el('td', { text: (row.heardBy ?? []).map((link) => `${link.gateway} ${link.packetsPerSecond.toFixed(1)}/s`).join(', ') || '–' }),
        el('td', { text: [row.batteryMillivolts ? `${row.batteryMillivolts} mV` : null,
          typeof row.batteryDaysLeft === 'number' ? `${Math.round(row.batteryDaysLeft)} days left` : null].filter(Boolean).join(', ') || '–' }),
        el('td', { text: (row.findings ?? []).filter((finding) => finding.level !== 'ok').map((finding) => `${finding.check}: ${finding.reason}`).join('; ') || '–' }),
        el('td', {}, trendButton));
    });
    clear(beaconsHolder).append(table('Beacons', ['State', 'Beacon', 'Identity', 'Last heard', 'Heard by', 'Battery', 'Findings', ''], rows, { id: 'fleet-table' }));
  }

  function drawAlerts(alerts) {
    if (!alerts.length) { clear(alertsHolder).append(el('h3', { text: 'Open alerts' }), message('No open alerts.')); return; }
    const rows = alerts.map((alert) => {
      let action = el('span', { text: alert.acknowledged ? `acknowledged by ${alert.acknowledgedBy ?? ''}` : 'not acknowledged' });
      if (session.canOperate && !alert.acknowledged) {
        action = el('button', { type: 'button', class: 'ack', 'data-alert': alert.id, text: 'Acknowledge', 'aria-label': `Acknowledge alert ${alert.id}: ${alert.label}` });
        action.addEventListener('click', async () => {
          action.disabled = true;
          try { await request('POST', `/v1/fleet/alerts/${alert.id}/ack`); await refresh(); } catch (error) { status.textContent = `Not acknowledged: ${error.message}`; action.disabled = false; }
        });
      }
      return el('tr', { 'data-alert': alert.id },
        el('td', { text: `#${alert.id}` }), el('td', { text: alert.level }), el('td', { text: alert.check }),
        el('td', { class: 'label', text: alert.label }), el('td', { text: alert.reason }),
        el('td', { text: formatTime(alert.raisedAt) }), el('td', {}, action));
    });
    clear(alertsHolder).append(table('Open alerts', ['Alert', 'Level', 'Check', 'Subject', 'Reason', 'Raised', 'Acknowledgement'], rows, { id: 'alert-table' }));
  }

  function drawUnregistered(list) {
    clear(unregisteredHolder);
    if (!list.length) return;
    unregisteredHolder.append(table('Unregistered identities', ['Identity', 'First heard', 'Last heard', 'Packets'],
      list.map((item) => el('tr', {}, el('td', { text: item.subject ?? identity(item) }), el('td', { text: formatTime(item.firstHeard) }),
        el('td', { text: formatTime(item.lastHeard) }), el('td', { text: item.packets })))));
  }

  // The server keeps each beacon's battery readings by hour (the medians its trend is fitted
  // through); the chart shows them with the fitted slope.
  async function drawTrend() {
    const chosen = chosenTrend;
    const history = await get(`/v1/fleet/battery?beacon=${encodeURIComponent(chosen.key)}`);
    if (chosen !== chosenTrend) return;
    clear(trendHolder).append(el('h3', { text: `Battery of ${chosen.label}` }));
    if (!history.readings.length) {
      trendHolder.append(message('This beacon has sent no battery reading (Eddystone-TLM) yet.'));
      return;
    }
    const points = history.readings.map((reading) => ({ time: reading.time, value: reading.millivolts }));
    trendHolder.append(lineChart(`Battery of ${chosen.label} by hour (mV)`, points, { unit: 'mV' }));
    trendHolder.append(message(typeof history.millivoltsPerDay === 'number'
      ? `Fitted: ${history.fittedMillivolts.toFixed(0)} mV now, ${history.millivoltsPerDay.toFixed(1)} mV a day.`
      : 'No trend yet: it needs a day of hourly readings.'));
  }

  async function chooseSite(chosen) {
    site = chosen;
    stopAll();
    let pending = null;
    const soon = () => { pending ??= setTimeout(() => { pending = null; refresh().catch(showError); }, 200); };
    stops.push(every(3, () => refresh().catch(showError)));
    const { lastID } = await get('/v1/events/cursor');
    stops.push(followEvents(site ? { site: String(site.id) } : {}, (events) => {
      if (events.some((event) => String(event.event ?? '').startsWith('alert'))) soon();
    }, { after: lastID }));
  }

  function showError(error) { status.textContent = `Could not refresh: ${error.message}`; }

  (async () => {
    try {
      const picker = await sitePicker('fleet-site', (chosen) => chooseSite(chosen).catch(showError), { allowAll: true });
      container.append(el('div', { class: 'toolbar' }, picker.node), status, alertsHolder, beaconsHolder, trendHolder, unregisteredHolder);
      await chooseSite(null);
    } catch (error) {
      container.append(message(`Could not load the fleet: ${error.message}`, 'error'));
    }
  })();
  return stopAll;
}

export default { id: 'fleet', title: 'Fleet', render };
