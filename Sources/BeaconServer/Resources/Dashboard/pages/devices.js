// Devices: the phones registered at each site with their consent; operators may remove one.
import { get, request } from '../api.js';
import { clear, el, formatTime, message, table } from '../dom.js';

const pageSize = 100;

function render(container) {
  const holder = el('div');
  const result = el('p', { 'aria-live': 'polite' });
  const more = el('button', { type: 'button', text: 'Show more', hidden: true });
  let devices = [];

  async function load(after) {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (after) query.set('after', after);
    const page = await get(`/v1/devices?${query}`);
    devices = after ? devices.concat(page) : page;
    more.hidden = page.length < pageSize;
    draw();
  }

  function draw() {
    const rows = devices.map((device) => {
      const remove = el('button', { type: 'button', class: 'remove', text: 'Remove', 'aria-label': `Remove device ${device.name ?? device.id}` });
      remove.addEventListener('click', async () => {
        try { await request('DELETE', `/v1/devices/${device.id}`); await load(); clear(result).append(message(`Removed ${device.id}.`)); } catch (error) { clear(result).append(message(error.message, 'error')); }
      });
      return el('tr', { 'data-device': device.id },
        el('td', { class: 'identity', text: device.id }), el('td', { class: 'label', text: device.anonymous ? '(anonymous)' : device.name ?? '–' }),
        el('td', { text: device.siteID }),
        el('td', { text: [device.consent?.events ? 'events' : null, device.consent?.positions ? 'positions' : null].filter(Boolean).join(', ') || 'none' }),
        el('td', { text: formatTime(device.createdAt) }), el('td', {}, remove));
    });
    clear(holder).append(rows.length ? table('Registered devices', ['Device', 'Name', 'Site', 'Consent', 'Registered', ''], rows, { id: 'device-table' }) : message('No devices registered.'));
  }

  more.addEventListener('click', () => load(devices.at(-1)?.id).catch((error) => clear(result).append(message(error.message, 'error'))));
  container.append(holder, more, result);
  load().catch((error) => container.append(message(`Could not load the devices: ${error.message}`, 'error')));
  return null;
}

export default { id: 'devices', title: 'Devices', needsOperator: true, render };
