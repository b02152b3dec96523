// Registry: sites, zones and beacons, how much of the numbering plan each category uses,
// directory export and import, and bulk plan upload with the generated configurations.
import { get, request } from '../api.js';
import { clear, el, identity, labelled, message, select, table } from '../dom.js';

// The API gives seconds; an operator thinks in days and hours.
function retentionText(seconds) {
  if (seconds == null) return "server's limit";
  for (const [size, unit] of [[86400, 'd'], [3600, 'h'], [60, 'min']]) {
    if (seconds % size === 0) return `${seconds / size} ${unit}`;
  }
  return `${seconds} s`;
}

function render(container, { session }) {
  const siteHolder = el('div');
  const directoryHolder = el('div');
  const planHolder = el('div');

  async function showSite(site, categories) {
    clear(siteHolder);
    if (!site) return;
    const [zones, beacons, use] = await Promise.all([get(`/v1/sites/${site.id}/zones`), get(`/v1/beacons?site=${site.id}`),
      get(`/v1/sites/${site.id}/plan-use`)]);
    const zoneByMinor = new Map(zones.map((zone) => [zone.minor, zone]));
    const names = new Map(categories.map((category) => [category.code, category.name]));
    siteHolder.append(
      el('h3', { text: `${site.name}: numbering plan` }),
      table(`Minors per category under major ${use.major}`, ['Category', 'Name', 'Minors', 'Used', 'Free', 'Next free'],
        use.categories.map((category) => el('tr', { 'data-category': category.code },
          el('td', { text: category.code }), el('td', { text: category.name ?? '–' }),
          el('td', { text: `${category.firstMinor}…${category.lastMinor}` }),
          el('td', { class: 'used', text: category.used }), el('td', { class: 'free', text: category.free }),
          el('td', { text: category.nextMinor ?? 'full' }))), { id: 'plan-use-table' }),
      table('Zones', ['Minor', 'Category', 'Label', 'Position (m)'],
        zones.map((zone) => el('tr', {}, el('td', { text: zone.minor }), el('td', { text: names.get(zone.category) ?? zone.category }),
          el('td', { class: 'label', text: zone.label }), el('td', { text: zone.position ? `${zone.position.x}, ${zone.position.y}` : '–' }))),
        { id: 'zone-table' }),
      table('Beacons', ['Identity', 'Zone', 'State', 'Measured power', 'Battery', 'Installed'],
        beacons.map((beacon) => el('tr', { 'data-beacon': beacon.id },
          el('td', { class: 'identity', text: identity(beacon) }), el('td', { class: 'label', text: zoneByMinor.get(beacon.minor)?.label ?? '–' }),
          el('td', { text: beacon.state }), el('td', { text: `${beacon.measuredPower} dBm` }),
          el('td', { text: beacon.battery ?? '–' }), el('td', { text: beacon.installedOn ?? '–' }))),
        { id: 'beacon-table' }));
  }

  function download(name, text, type) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const link = el('a', { href: url, download: name, text: `Download ${name}` });
    return link;
  }

  function directorySection(organisations) {
    clear(directoryHolder).append(el('h3', { text: 'Directory' }));
    if (!organisations.length) { directoryHolder.append(message('No organisation yet.')); return; }
    const organisationControl = select('directory-organisation', organisations.map((organisation) => ({ value: organisation.id, text: organisation.name })), organisations[0].id);
    const formatControl = select('directory-format', [{ value: 'json', text: 'JSON' }, { value: 'csv', text: 'CSV' }], 'json');
    const result = el('p', { 'aria-live': 'polite' });
    const exportButton = el('button', { type: 'button', text: 'Export' });
    exportButton.addEventListener('click', async () => {
      try {
        const path = `/v1/organisations/${organisationControl.value}/directory`;
        const csv = formatControl.value === 'csv';
        const text = csv ? await request('GET', `${path}?format=csv`, { accept: 'text/csv' }) : JSON.stringify(await get(path), null, 2);
        clear(result).append(download(`directory.${formatControl.value}`, text, csv ? 'text/csv' : 'application/json'));
      } catch (error) { clear(result).append(message(error.message, 'error')); }
    });
    const controls = [labelled('Organisation', organisationControl), labelled('Format', formatControl), exportButton];
    if (session.canOperate) {
      const file = el('input', { type: 'file', id: 'directory-file', accept: '.json,.csv,application/json,text/csv' });
      const importButton = el('button', { type: 'button', text: 'Import' });
      importButton.addEventListener('click', async () => {
        const chosen = file.files?.[0];
        if (!chosen) { clear(result).append(message('Choose a directory file first.', 'error')); return; }
        try {
          const text = await chosen.text();
          const csv = chosen.name.toLowerCase().endsWith('.csv');
          await request('PUT', csv ? `/v1/directory?organisation=${encodeURIComponent(organisationControl.value)}` : '/v1/directory',
            { body: text, contentType: csv ? 'text/csv' : 'application/json' });
          clear(result).append(message(`Imported ${chosen.name}.`));
        } catch (error) { clear(result).append(message(`Not imported: ${error.message}`, 'error')); }
      });
      controls.push(labelled('Directory file to import', file), importButton);
    }
    directoryHolder.append(el('div', { class: 'toolbar' }, controls), result);
  }

  function planSection(sites) {
    clear(planHolder);
    if (!session.canOperate || !sites.length) return;
    const siteControl = select('plan-site', sites.map((site) => ({ value: site.id, text: site.name })), sites[0].id);
    const formatControl = select('plan-format', ['advertise', 'hcitool', 'json', 'csv'].map((value) => ({ value, text: value })), 'advertise');
    const text = el('textarea', { id: 'plan-text', rows: 6, spellcheck: 'false',
      placeholder: 'category,label,x,y\n2,Electronics,14,3' });
    const output = el('pre', { id: 'plan-output', tabindex: 0 });
    const result = el('p', { 'aria-live': 'polite' });
    const send = el('button', { type: 'button', text: 'Allocate and configure' });
    const copy = el('button', { type: 'button', text: 'Copy configurations', hidden: true });
    send.addEventListener('click', async () => {
      const body = text.value.trim();
      if (!body) { clear(result).append(message('Write or paste a plan first.', 'error')); return; }
      try {
        const json = body.startsWith('[');
        const answer = await request('POST', `/v1/sites/${siteControl.value}/plan?format=${formatControl.value}`,
          { body, contentType: json ? 'application/json' : 'text/csv', accept: formatControl.value === 'json' ? 'application/json' : 'text/plain' });
        output.textContent = typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2);
        copy.hidden = false;
        clear(result).append(message('Allocated. The configurations are below.'));
      } catch (error) { clear(result).append(message(`Refused: ${error.message}`, 'error')); }
    });
    copy.addEventListener('click', () => navigator.clipboard?.writeText(output.textContent));
    planHolder.append(el('h3', { text: 'Bulk plan' }),
      message('One line per position: category,label,x,y[,measured_power,tx_power,battery], or the JSON array form. All positions are allocated in one transaction, or none.'),
      el('div', { class: 'toolbar' }, labelled('Site', siteControl), labelled('Configurations as', formatControl)),
      labelled('Plan', text), el('div', { class: 'toolbar' }, send, copy), result, output);
  }

  (async () => {
    try {
      const [sites, organisations, categories] = await Promise.all([get('/v1/sites'), get('/v1/organisations'), get('/v1/categories')]);
      const siteControl = select('registry-site', sites.map((site) => ({ value: site.id, text: site.name })), sites[0]?.id);
      siteControl.addEventListener('change', () => showSite(sites.find((site) => String(site.id) === siteControl.value), categories));
      container.append(
        table('Sites', ['Name', 'Address', 'UUID', 'Major', 'Plan (m)', 'Events kept'],
          sites.map((site) => el('tr', { 'data-site': site.id }, el('td', { class: 'label', text: site.name }), el('td', { text: site.address ?? '' }),
            el('td', { class: 'identity', text: site.uuid }), el('td', { text: site.major }),
            el('td', { text: site.planWidth ? `${site.planWidth} × ${site.planHeight}` : '–' }),
            el('td', { class: 'retention', text: retentionText(site.retainEvents) }))), { id: 'site-table' }),
        sites.length ? el('div', { class: 'toolbar' }, labelled('Show site', siteControl)) : message('No site yet.'),
        siteHolder, directoryHolder, planHolder);
      await showSite(sites[0], categories);
      directorySection(organisations);
      planSection(sites);
    } catch (error) {
      container.append(message(`Could not load the registry: ${error.message}`, 'error'));
    }
  })();
  return null;
}

export default { id: 'registry', title: 'Registry', render };
