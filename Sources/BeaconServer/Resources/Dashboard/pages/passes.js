// Wallet passes: the passes a site issued and the beacons each carries; operators issue one for
// a visitor and download it to hand over. Visitor names came from outside, so they are text.
import { get, request, storedToken } from '../api.js';
import { clear, el, formatTime, labelled, message, select, table } from '../dom.js';

/** The signed .pkpass, fetched with the token (a plain link could not send it). */
async function download(siteID, serial) {
  const response = await fetch(`/v1/sites/${siteID}/passes/${encodeURIComponent(serial)}`, {
    headers: { Authorization: `Bearer ${storedToken()}`, Accept: 'application/vnd.apple.pkpass' }, credentials: 'omit', cache: 'no-store',
  });
  if (!response.ok) throw new Error(`the pass could not be fetched (${response.status})`);
  const link = el('a', { href: URL.createObjectURL(await response.blob()), download: `${serial}.pkpass` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

function render(container, { session }) {
  const siteHolder = el('div');
  const templateHolder = el('div');
  const listHolder = el('div');
  const formHolder = el('div');
  const result = el('p', { 'aria-live': 'polite', id: 'pass-result' });
  let sites = [];
  let siteID = null;

  async function showTemplate() {
    try {
      const template = await get(`/v1/sites/${siteID}/pass-template`);
      const images = Object.keys(template.images ?? {}).sort().join(', ');
      clear(templateHolder).append(message(`Pass template: ${template.pass?.description ?? 'pass'} (${images}), changed ${formatTime(template.updatedAt)}.`));
    } catch (error) {
      clear(templateHolder).append(message(error.status === 404
        ? 'This site has no pass template yet: PUT /v1/sites/{id}/pass-template stores one (docs/wallet.md).'
        : `The pass template could not be read: ${error.message}`, error.status === 404 ? 'note' : 'error'));
    }
  }

  async function showList() {
    const passes = await get(`/v1/sites/${siteID}/passes`);
    const rows = passes.map((pass) => {
      let action = null;
      if (session.canOperate) {
        action = el('button', { type: 'button', class: 'download', text: 'Download', 'aria-label': `Download the pass ${pass.serial}` });
        action.addEventListener('click', async () => {
          try { await download(siteID, pass.serial); } catch (error) { clear(result).append(message(error.message, 'error')); }
        });
      }
      const beacons = pass.beacons.map((beacon) => `${beacon.major}:${beacon.minor}`).join(', ');
      return el('tr', { 'data-serial': pass.serial },
        el('td', { class: 'serial', text: pass.serial }),
        el('td', { class: 'visitor', text: pass.visitor }),
        el('td', { class: 'version', text: pass.version }),
        el('td', { class: 'beacons', text: beacons, title: pass.beacons.map((beacon) => beacon.relevantText).join('\n') }),
        el('td', { text: formatTime(pass.updatedAt) }),
        el('td', {}, action));
    });
    clear(listHolder).append(rows.length
      ? table('Issued passes', ['Serial', 'Visitor', 'Version', 'Beacons (major:minor)', 'Updated', ''], rows, { id: 'pass-table' })
      : message('No pass issued for this site yet.'));
  }

  async function showForm() {
    clear(formHolder);
    if (!session.canOperate) return;
    const zones = await get(`/v1/sites/${siteID}/zones`);
    const visitor = el('input', { id: 'pass-visitor', type: 'text', maxlength: 100, required: true, autocomplete: 'off' });
    const choices = zones.map((zone) => labelled(`${zone.label} (${zone.minor})`, el('input', { type: 'checkbox', value: zone.id, name: 'pass-zone', id: `pass-zone-${zone.id}` })));
    const zoneSet = el('fieldset', { id: 'pass-zones' },
      el('legend', { text: 'Beacons to carry (none chosen: the site\'s entrance zones; at most 10)' }), ...choices);
    const form = el('form', { class: 'stack', 'aria-label': 'Issue a pass' },
      labelled('Visitor', visitor), zoneSet, el('button', { type: 'submit', id: 'pass-issue', text: 'Issue pass' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const chosen = [...zoneSet.querySelectorAll('input:checked')].map((box) => Number(box.value));
      const body = chosen.length ? { visitor: visitor.value, zones: chosen } : { visitor: visitor.value };
      try {
        const issued = await request('POST', `/v1/sites/${siteID}/passes`, { body });
        visitor.value = '';
        await showList();
        clear(result).append(message(`Issued pass ${issued.pass.serial} carrying ${issued.pass.beacons.length} beacon(s).`));
      } catch (error) {
        clear(result).append(message(`Not issued: ${error.message}`, 'error'));
      }
    });
    formHolder.append(el('h3', { text: 'Issue a pass' }), form);
  }

  async function showSite() {
    clear(result);
    await showTemplate();
    await showList();
    await showForm();
  }

  (async () => {
    try {
      sites = await get('/v1/sites');
      if (!sites.length) {
        container.append(message('No site yet.'));
        return;
      }
      siteID = sites[0].id;
      const siteControl = select('pass-site', sites.map((site) => ({ value: site.id, text: site.name })), siteID);
      siteControl.addEventListener('change', async () => { siteID = Number(siteControl.value); await showSite(); });
      siteHolder.append(labelled('Site', siteControl));
      container.append(siteHolder, templateHolder, listHolder, result, formHolder);
      await showSite();
    } catch (error) {
      container.append(message(`Could not load the passes: ${error.message}`, 'error'));
    }
  })();
  return null;
}

export default { id: 'passes', title: 'Wallet passes', render };
