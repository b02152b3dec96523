// Messages of the day: what visitors near a zone are told. Operators add and remove them.
// Bodies are shown as text, HTML ones too (their sanitised source), never rendered.
import { get, request } from '../api.js';
import { clear, el, formatTime, labelled, message, select, table } from '../dom.js';

function render(container, { session }) {
  const listHolder = el('div');
  const formHolder = el('div');
  const result = el('p', { 'aria-live': 'polite' });
  let sites = [];
  let zonesBySite = new Map();

  async function zonesOf(siteID) {
    if (!zonesBySite.has(siteID)) zonesBySite.set(siteID, await get(`/v1/sites/${siteID}/zones`));
    return zonesBySite.get(siteID);
  }

  async function showList() {
    const messages = await get('/v1/messages');
    const zoneLabels = new Map();
    for (const site of sites) for (const zone of await zonesOf(site.id)) zoneLabels.set(zone.id, `${site.name}: ${zone.label}`);
    const rows = messages.map((item) => {
      let action = null;
      if (session.canOperate) {
        action = el('button', { type: 'button', class: 'remove', text: 'Remove', 'aria-label': `Remove message ${item.id}` });
        action.addEventListener('click', async () => {
          try { await request('DELETE', `/v1/messages/${item.id}`); await showList(); clear(result).append(message(`Removed message ${item.id}.`)); } catch (error) { clear(result).append(message(error.message, 'error')); }
        });
      }
      return el('tr', { 'data-message': item.id },
        el('td', { text: item.id }),
        el('td', { class: 'label', text: item.zoneID ? zoneLabels.get(item.zoneID) ?? `zone ${item.zoneID}` : `beacon ${item.beaconID}` }),
        el('td', { text: item.format }),
        el('td', { class: 'body', text: item.body }),
        el('td', { text: formatTime(item.updatedAt) }),
        el('td', {}, action));
    });
    clear(listHolder).append(rows.length
      ? table('Messages of the day', ['#', 'Where', 'Format', 'Message', 'Changed', ''], rows, { id: 'message-table' })
      : message('No messages of the day.'));
  }

  async function showForm() {
    if (!session.canOperate || !sites.length) return;
    const siteControl = select('message-site', sites.map((site) => ({ value: site.id, text: site.name })), sites[0].id);
    const zoneControl = select('message-zone', [], '');
    const formatControl = select('message-format', [{ value: 'text', text: 'Text' }, { value: 'html', text: 'HTML (sanitised by the server)' }], 'text');
    const body = el('textarea', { id: 'message-body', rows: 3, required: true });
    const fillZones = async () => {
      const zones = await zonesOf(Number(siteControl.value));
      zoneControl.replaceChildren(...zones.map((zone) => el('option', { value: zone.id, text: `${zone.label} (${zone.minor})` })));
    };
    siteControl.addEventListener('change', fillZones);
    await fillZones();
    const form = el('form', { class: 'stack', 'aria-label': 'New message of the day' },
      labelled('Site', siteControl), labelled('Zone', zoneControl), labelled('Format', formatControl), labelled('Message', body),
      el('button', { type: 'submit', text: 'Add message' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        const saved = await request('POST', '/v1/messages', { body: { zoneID: Number(zoneControl.value), format: formatControl.value, body: body.value } });
        body.value = '';
        await showList();
        clear(result).append(message(saved.removed?.length ? `Added; the server removed ${saved.removed.join(', ')} from the HTML.` : 'Added.'));
      } catch (error) { clear(result).append(message(`Not added: ${error.message}`, 'error')); }
    });
    clear(formHolder).append(el('h3', { text: 'Add a message' }), form);
  }

  (async () => {
    try {
      sites = await get('/v1/sites');
      container.append(listHolder, result, formHolder);
      await showList();
      await showForm();
    } catch (error) {
      container.append(message(`Could not load the messages: ${error.message}`, 'error'));
    }
  })();
  return null;
}

export default { id: 'messages', title: 'Messages of the day', render };
