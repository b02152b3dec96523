// Events: the live stream of region and room enters and exits, fleet alerts, and devices'
// check-ins and offers, filtered by site and zone on the server and by kind here.
import { followEvents, get } from '../api.js';
import { clear, el, formatTime, labelled, message, select } from '../dom.js';
import { sitePicker } from './common.js';

const kinds = [
  ['enter', 'Region enter'], ['exit', 'Region exit'], ['roomEnter', 'Room enter'], ['roomExit', 'Room exit'],
  ['alertRaised', 'Alert raised'], ['alertLowered', 'Alert lowered'], ['alertCleared', 'Alert cleared'],
  ['checkIn', 'Check-in'], ['offersDelivered', 'Offers delivered'],
];
const kindOf = (event) => event.event ?? event.kind ?? 'unknown';
const shownRows = 200;

function render(container) {
  const status = el('p', { class: 'note', 'aria-live': 'polite', text: 'Connecting…' });
  const rows = el('tbody', { id: 'event-rows' });
  const zoneControl = select('events-zone', [{ value: '', text: 'All zones' }], '');
  const kindBoxes = kinds.map(([value, text]) => {
    const box = el('input', { type: 'checkbox', id: `kind-${value}`, value, checked: !value.startsWith('alert') });
    box.addEventListener('change', applyKinds);
    return el('div', { class: 'check' }, box, el('label', { for: box.id, text }));
  });
  let stop = null;
  let site = null;
  let zones = [];

  function applyKinds() {
    const wanted = new Set(kindBoxes.map((box) => box.querySelector('input')).filter((box) => box.checked).map((box) => box.value));
    for (const row of rows.children) row.hidden = !wanted.has(row.dataset.kind);
  }

  function describe(event) {
    if (event.room) return `${event.room}: ${event.subject?.name ?? ''}`;
    if (event.reason) return `${event.check ?? ''} (${event.level ?? ''}): ${event.reason}`;
    if (event.zone) return `${event.zone.label}: device ${event.device}`;
    if (event.offers) return `${event.offers.map((offer) => offer.title).join(', ')}: device ${event.device}`;
    return event.region?.identifier ?? '';
  }

  function add(events) {
    const receivedAt = Date.now();
    for (const event of events) {
      const kind = kindOf(event);
      const row = el('tr', { 'data-kind': kind, 'data-event-id': event.id, 'data-received-at': receivedAt },
        el('td', { text: event.id }),
        el('td', { text: formatTime(event.time) }),
        el('td', { text: kind }),
        el('td', { class: 'label', text: event.label ?? '' }),
        el('td', { text: describe(event) }));
      rows.prepend(row);
    }
    while (rows.children.length > shownRows) rows.lastElementChild.remove();
    applyKinds();
  }

  async function restart() {
    stop?.();
    clear(rows);
    const query = {};
    if (site) query.site = String(site.id);
    const zone = zones.find((candidate) => String(candidate.id) === zoneControl.value);
    if (zone && site) query.region = `${site.uuid}:${site.major}:${zone.minor}`;
    // Start from the recent past rather than the first event ever stored.
    const { lastID } = await get('/v1/events/cursor');
    const recent = await get(`/v1/events?${new URLSearchParams({ ...query, format: 'json', after: String(Math.max(0, lastID - 100)), limit: '100' })}`);
    add(recent);
    stop = followEvents(query, add, { after: Math.max(lastID, ...recent.map((event) => event.id)), onState: (text) => { status.textContent = text; } });
    status.textContent = 'live';
  }

  async function chooseSite(chosen) {
    site = chosen;
    zones = site ? await get(`/v1/sites/${site.id}/zones`) : [];
    const options = [{ value: '', text: 'All zones' }, ...zones.map((zone) => ({ value: zone.id, text: `${zone.label} (${zone.minor})` }))];
    zoneControl.replaceChildren(...options.map((option) => el('option', { value: option.value, text: option.text })));
    await restart();
  }

  zoneControl.addEventListener('change', () => restart().catch(showError));
  function showError(error) { container.append(message(`Could not follow the events: ${error.message}`, 'error')); }

  (async () => {
    try {
      const picker = await sitePicker('events-site', (chosen) => chooseSite(chosen).catch(showError), { allowAll: true });
      container.append(
        el('div', { class: 'toolbar' }, picker.node, labelled('Zone', zoneControl),
          el('fieldset', { class: 'kinds' }, el('legend', { text: 'Kinds' }), kindBoxes)),
        status,
        el('div', { class: 'table-wrap' }, el('table', { id: 'event-table' },
          el('caption', { text: `Newest first, the last ${shownRows} events` }),
          el('thead', {}, el('tr', {}, ['#', 'Time', 'Kind', 'Label', 'Region, room or reason'].map((heading) => el('th', { scope: 'col', text: heading })))),
          rows)));
      await chooseSite(null);
    } catch (error) {
      showError(error);
    }
  })();
  return () => stop?.();
}

export default { id: 'events', title: 'Events', render };
