// Venue: the site's floor plan with rooms, walls, beacons by fleet state, gateways and the
// positions of what is tracked, kept live by the site's event stream.
import { APIError, followEvents, get, request } from '../api.js';
import { clear, el, formatTime, identity, labelled, message, svg, table } from '../dom.js';
import { barChart, displayState, every, sitePicker } from './common.js';

async function optional(path) {
  try {
    return await get(path);
  } catch (error) {
    if (error instanceof APIError && error.status === 404) return null;
    throw error;
  }
}

function render(container) {
  const status = el('p', { class: 'note', 'aria-live': 'polite' });
  const planHolder = el('div', { class: 'plan' });
  const calibrationLine = el('p', { class: 'note calibration', 'aria-live': 'polite' });
  const details = el('aside', { class: 'details', 'aria-live': 'polite', 'aria-label': 'Beacon details' },
    message('Choose a beacon on the plan (click it, or Tab to it and press Enter).'));
  const surveyHolder = el('section', { class: 'survey', 'aria-label': 'Survey recordings' });
  let stops = [];
  let state = null;
  let selectedID = null;
  let survey = null;

  const stopAll = () => { stops.forEach((stop) => stop()); stops = []; };

  async function load(site) {
    stopAll();
    clear(planHolder);
    if (!site) { planHolder.append(message('No site yet: create one on the Registry page.')); return; }
    const [map, zones, beacons, gateways] = await Promise.all([
      optional(`/v1/sites/${site.id}/map`), get(`/v1/sites/${site.id}/zones`),
      get(`/v1/beacons?site=${site.id}`), get('/v1/gateways'),
    ]);
    state = { site, map, zones, beacons, gateways: gateways.filter((gateway) => gateway.siteID === site.id), fleet: new Map(), positions: [] };
    draw();
    survey = map ? surveySection(site) : null;
    clear(surveyHolder).append(el('h3', { text: 'Survey' }),
      survey ? survey.node : message('Upload a map (PUT /v1/sites/{id}/map) to record a survey on it.'));
    if (survey) stops.push(every(2, survey.refresh));
    const refresh = async () => {
      try {
        const [fleet, positions, calibration] = await Promise.all([get(`/v1/fleet?site=${site.id}`),
          map ? optional(`/v1/positions?site=${site.id}`) : null, map ? optional(`/v1/sites/${site.id}/calibration`) : null]);
        state.fleet = new Map(fleet.beacons.map((row) => [identity(row), row]));
        state.positions = positions?.positions ?? [];
        calibrationLine.textContent = describeCalibration(calibration);
        update();
        status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
      } catch (error) {
        status.textContent = `Could not refresh: ${error.message}`;
      }
    };
    let pending = null;
    const soon = () => { pending ??= setTimeout(() => { pending = null; refresh(); }, 200); };
    stops.push(every(5, refresh));
    stops.push(followEvents({ site: String(site.id) }, soon, { after: (await get('/v1/events/cursor')).lastID }));
  }

  function draw() {
    const { site, map, zones, beacons, gateways } = state;
    const width = map?.venue?.width ?? site.planWidth ?? 40;
    const height = map?.venue?.height ?? site.planHeight ?? 20;
    const unit = Math.max(width, height) / 60;
    const plan = svg('svg', {
      viewBox: `${-unit} ${-unit} ${width + 2 * unit} ${height + 2 * unit}`, class: 'floor', role: 'group',
      'aria-label': `Floor plan of ${site.name}, ${width} by ${height} metres`,
    });
    plan.append(svg('rect', { x: 0, y: 0, width, height, class: 'outline' }));
    for (const room of map?.rooms ?? []) {
      const points = room.polygon.map((point) => `${point.x},${point.y}`).join(' ');
      const cx = room.polygon.reduce((sum, point) => sum + point.x, 0) / room.polygon.length;
      // The name sits near the room's top edge, clear of the beacons and gateways usually placed mid-room.
      const cy = Math.min(...room.polygon.map((point) => point.y)) + unit * 2;
      plan.append(svg('polygon', { points, class: 'room', 'data-room': room.name }, svg('title', { text: room.name })),
        svg('text', { x: cx, y: cy, class: 'room-name', 'font-size': unit * 1.4, text: room.name }));
    }
    for (const wall of map?.venue?.walls ?? []) {
      plan.append(svg('line', { x1: wall.from.x, y1: wall.from.y, x2: wall.to.x, y2: wall.to.y, class: 'wall', 'stroke-width': unit / 2 }));
    }
    for (const scan of map?.survey ?? []) {
      plan.append(svg('circle', { cx: scan.position.x, cy: scan.position.y, r: unit / 4, class: 'survey-spot' }));
    }
    // A tag survey's spots as small squares: the carried beacons' fingerprints, beside the phones'.
    for (const scan of map?.tagSurvey ?? []) {
      plan.append(svg('rect', { x: scan.position.x - unit / 4, y: scan.position.y - unit / 4, width: unit / 2, height: unit / 2, class: 'tag-survey-spot' }));
    }
    for (const door of map?.doors ?? []) {
      plan.append(svg('circle', { cx: door.position.x, cy: door.position.y, r: unit / 2, class: 'door' }, svg('title', { text: `door ${door.name ?? ''}` })));
    }
    const placed = new Map((map?.receivers ?? []).filter((receiver) => receiver.position).map((receiver) => [receiver.name, receiver.position]));
    for (const gateway of gateways) {
      const position = placed.get(gateway.name);
      if (!position) continue;
      plan.append(svg('g', { class: 'gateway', 'data-gateway': gateway.name },
        svg('rect', { x: position.x - unit, y: position.y - unit, width: unit * 2, height: unit * 2 }),
        svg('title', { text: `gateway ${gateway.name}` })));
    }
    const zoneByMinor = new Map(zones.map((zone) => [zone.minor, zone]));
    for (const beacon of beacons) {
      const zone = zoneByMinor.get(beacon.minor);
      const label = zone?.label ?? identity(beacon);
      const mark = svg('g', { class: 'beacon', tabindex: 0, role: 'button', 'data-beacon': beacon.id, 'aria-label': `beacon ${label}` },
        svg('circle', { cx: beacon.position.x, cy: beacon.position.y, r: unit }),
        svg('title', { text: label }));
      const choose = () => { selectedID = beacon.id; showDetails(); };
      mark.addEventListener('click', choose);
      mark.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); choose(); } });
      plan.append(mark);
    }
    plan.append(svg('g', { class: 'subjects' }));
    // A click on the plan chooses the spot of the next survey scan, in the map's metres.
    plan.addEventListener('click', (event) => {
      const matrix = plan.getScreenCTM();
      if (!survey || !matrix) return;
      const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
      if (point.x < 0 || point.y < 0 || point.x > width || point.y > height) return;
      survey.choose(point.x, point.y);
    });
    clear(planHolder).append(plan, legend());
    state.plan = plan;
    state.unit = unit;
    update();
  }

  function legend() {
    return el('ul', { class: 'legend', 'aria-label': 'Legend' },
      ['ok', 'unknown', 'warning', 'alert', 'missing', 'not heard'].map((name) =>
        el('li', {}, el('span', { class: `swatch state-${name.replace(' ', '-')}`, 'aria-hidden': 'true' }), name)),
      el('li', {}, el('span', { class: 'swatch gateway-swatch', 'aria-hidden': 'true' }), 'gateway'),
      el('li', {}, el('span', { class: 'swatch subject-swatch', 'aria-hidden': 'true' }), 'tracked position'),
      state.map?.survey?.length
        ? el('li', {}, el('span', { class: 'swatch survey-swatch', 'aria-hidden': 'true' }), `survey scan (${state.map.survey.length})`) : null,
      state.map?.tagSurvey?.length
        ? el('li', {}, el('span', { class: 'swatch tag-survey-swatch', 'aria-hidden': 'true' }), `tag survey scan (${state.map.tagSurvey.length})`) : null);
  }

  // The site's self-calibration in a line: what carried beacons (the gateways' fit) and
  // phones (with the map's survey, its own fit) are located with.
  function describeCalibration(calibration) {
    if (!calibration) return '';
    const gateways = calibration.status === 'fitted'
      ? `Calibration: path-loss exponent ${calibration.exponent.toFixed(2)} from ${calibration.links} gateway links, residual spread ${calibration.residualSpread.toFixed(1)} dB.`
      : 'Calibration: waiting for fixed gateways to hear fixed beacons.';
    const survey = calibration.survey;
    if (!survey) return gateways;
    const phones = typeof survey.exponent === 'number' ? `exponent ${survey.exponent.toFixed(2)}` : 'not fitted yet';
    return `${gateways} Phones: ${phones}, with the map's survey of ${survey.points} scans.`;
  }

  // Recording a survey: a tag or a phone held still at a spot the operator chose on the plan;
  // the finished scans go into the map in one save (each save starts the site's tracking afresh).
  function surveySection(site) {
    const base = `/v1/sites/${site.id}/survey-recordings`;
    const subject = el('input', { id: 'survey-subject', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false',
      placeholder: 'UUID:major:minor, or a phone' });
    const x = el('input', { id: 'survey-x', type: 'number', step: 'any', min: 0, required: true });
    const y = el('input', { id: 'survey-y', type: 'number', step: 'any', min: 0, required: true });
    const seconds = el('input', { id: 'survey-seconds', type: 'number', min: 1, max: 120, step: 'any', value: 10, required: true });
    const result = el('div', { 'aria-live': 'polite' });
    const recordings = table('Survey recordings', ['Tag or phone', 'Kind', 'Spot (m)', 'Seconds', 'Status', 'Heard', ''], [], { id: 'survey-table' });
    const rows = recordings.querySelector('tbody');
    rows.id = 'survey-rows';
    const save = el('button', { type: 'button', id: 'survey-save', text: 'Save finished scans to the map', disabled: true });
    const form = el('form', { 'aria-label': 'Record a survey scan', class: 'toolbar survey-form' },
      labelled('Tag or phone', subject), labelled('x (m)', x), labelled('y (m)', y), labelled('Seconds', seconds),
      el('button', { type: 'submit', text: 'Record' }));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await request('POST', base, { body: { subject: subject.value.trim(), position: { x: Number(x.value), y: Number(y.value) }, seconds: Number(seconds.value) } });
        clear(result).append(message('Recording: hold it still at the spot until its row says finished.'));
        await refresh();
      } catch (error) { clear(result).append(message(`Refused: ${error.message}`, 'error')); }
    });
    save.addEventListener('click', async () => {
      try {
        const saved = await request('POST', `${base}/save`);
        const dropped = saved.dropped ? `, ${saved.dropped} dropped (their receivers left the map)` : '';
        clear(result).append(message(`Saved ${saved.tagSurvey} tag and ${saved.survey} phone scans into the map (version ${saved.mapVersion})${dropped}.`));
        await load(site);
      } catch (error) { clear(result).append(message(`Could not save: ${error.message}`, 'error')); }
    });
    function heard(recording) {
      if (recording.status === 'failed') return recording.reason ?? 'nothing heard';
      if (recording.status !== 'finished') return '–';
      const count = Object.keys(recording.readings).length;
      return `${count} ${recording.kind === 'tag' ? 'gateway' : 'beacon'}${count === 1 ? '' : 's'}, ${recording.packets} packets`;
    }
    async function refresh() {
      let reply;
      try { reply = await get(base); } catch { return; }
      clear(rows).append(...reply.recordings.map((recording) => {
        const discard = el('button', { type: 'button', class: 'link discard', text: 'Discard' });
        discard.addEventListener('click', async () => {
          try { await request('DELETE', `${base}/${recording.id}`); await refresh(); } catch (error) { clear(result).append(message(`Could not discard: ${error.message}`, 'error')); }
        });
        return el('tr', { 'data-recording': recording.id, 'data-status': recording.status },
          el('td', { class: 'identity', text: recording.subject }), el('td', { text: recording.kind }),
          el('td', { text: `${recording.position.x.toFixed(1)}, ${recording.position.y.toFixed(1)}` }),
          el('td', { text: recording.seconds }), el('td', { class: 'status', text: recording.status }),
          el('td', { class: 'heard', text: heard(recording) }), el('td', {}, discard));
      }));
      save.disabled = !reply.recordings.some((recording) => recording.status === 'finished');
    }
    function choose(atX, atY) {
      x.value = atX.toFixed(1);
      y.value = atY.toFixed(1);
      state.plan.querySelector('.survey-choice')?.remove();
      state.plan.append(svg('circle', { cx: atX, cy: atY, r: state.unit * 0.6, class: 'survey-choice' }, svg('title', { text: 'next survey spot' })));
    }
    const node = el('div', {},
      message('Hold a tag (or a phone that posts its own sightings) still at a spot: click the spot on the plan, name it, and record. Finished scans become the map\'s tag survey or survey when saved, and carried beacons and phones are then also located by fingerprints.'),
      form, result, recordings,
      el('div', { class: 'toolbar' }, save));
    return { node, refresh, choose };
  }

  function update() {
    if (!state?.plan) return;
    for (const mark of state.plan.querySelectorAll('[data-beacon]')) {
      const beacon = state.beacons.find((candidate) => String(candidate.id) === mark.dataset.beacon);
      const shown = displayState(state.fleet.get(identity(beacon)));
      mark.setAttribute('class', `beacon state-${shown.replace(' ', '-')}`);
      mark.dataset.state = shown;
    }
    const layer = clear(state.plan.querySelector('.subjects'));
    for (const position of state.positions) {
      if (typeof position.x !== 'number' || typeof position.y !== 'number') continue;
      const name = position.kind === 'phone' ? `phone ${position.subject}` : `tag ${position.subject}`;
      layer.append(svg('g', { class: `subject ${position.kind}`, 'data-subject': position.subject },
        svg('circle', { cx: position.x, cy: position.y, r: state.unit * 0.8 }),
        svg('title', { text: `${name}${position.room ? ` in ${position.room}` : ''}` })));
    }
    if (selectedID !== null) showDetails();
  }

  function showDetails() {
    const beacon = state.beacons.find((candidate) => candidate.id === selectedID);
    if (!beacon) return;
    const row = state.fleet.get(identity(beacon));
    const zone = state.zones.find((candidate) => candidate.minor === beacon.minor);
    const heard = (row?.heardBy ?? []).filter((link) => typeof link.rssi === 'number');
    const facts = [
      ['Label', row?.label ?? zone?.label ?? '–'],
      ['Identity', identity(beacon)],
      ['State', displayState(row)],
      ['Last heard', formatTime(row?.lastHeard)],
      ['Battery', [beacon.battery, row?.batteryMillivolts ? `${row.batteryMillivolts} mV` : null,
        typeof row?.batteryDaysLeft === 'number' ? `${Math.round(row.batteryDaysLeft)} days left` : null].filter(Boolean).join(', ') || '–'],
    ];
    clear(details).append(
      el('h3', { text: row?.label ?? zone?.label ?? identity(beacon) }),
      el('dl', {}, facts.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', { text: value })])),
      (row?.findings ?? []).length ? el('ul', { class: 'findings' }, row.findings.map((finding) => el('li', { text: `${finding.check} (${finding.level}): ${finding.reason}` }))) : null,
      heard.length
        ? barChart('RSSI at each gateway (dBm)', heard.map((link) => ({ label: link.gateway, value: link.rssi })), { unit: 'dBm', floor: -100 })
        : message('No gateway has heard it yet.'));
  }

  (async () => {
    try {
      const picker = await sitePicker('venue-site', (site) => load(site).catch(showError));
      container.append(el('div', { class: 'toolbar' }, picker.node), status, el('div', { class: 'venue' }, planHolder, details), calibrationLine, surveyHolder);
      await load(picker.sites[0]);
    } catch (error) {
      showError(error);
    }
  })();
  function showError(error) { container.append(message(`Could not load the venue: ${error.message}`, 'error')); }
  return stopAll;
}

export default { id: 'venue', title: 'Venue', render };
