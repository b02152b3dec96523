// Treasure hunts and offers: each hunt with its stamps, limits and leaderboard (names as text),
// and the offers made to visitors near a zone. Operators may delete either.
import { get, request } from '../api.js';
import { clear, el, message, table } from '../dom.js';
import { sitePicker } from './common.js';

function render(container, { session }) {
  const huntsHolder = el('div', { id: 'hunt-list' });
  const offersHolder = el('div', { id: 'offer-list' });
  const result = el('p', { 'aria-live': 'polite' });
  let siteID = null;

  function removeButton(what, path, name) {
    if (!session.canOperate) return null;
    const button = el('button', { type: 'button', class: 'remove', text: 'Delete', 'aria-label': `Delete ${what} ${name}` });
    button.addEventListener('click', async () => {
      try { await request('DELETE', path); clear(result).append(message(`Deleted ${what} ${name}.`)); await show(); } catch (error) { clear(result).append(message(error.message, 'error')); }
    });
    return button;
  }

  async function show() {
    const query = siteID ? `?site=${siteID}` : '';
    const [hunts, offers] = await Promise.all([get(`/v1/hunts${query}`), get(`/v1/offers${query}`)]);
    const boards = await Promise.all(hunts.map((hunt) => get(`/v1/hunts/${hunt.id}/leaderboard?limit=10`)));
    const sections = hunts.map((hunt, index) => {
      const board = boards[index];
      const counts = Object.entries(board.counts ?? {}).map(([status, count]) => `${count} ${status}`).join(', ') || 'no runs yet';
      return el('section', { class: 'hunt', 'data-hunt': hunt.id },
        el('h3', { class: 'label', text: hunt.name }),
        el('p', { text: `${hunt.stampZoneIDs.length} stamps within ${(hunt.timeLimit / 60).toFixed(0)} min, at most ${hunt.maxSpeed} m/s between them; reward: ` },
          el('span', { class: 'label', text: hunt.reward })),
        el('p', { text: `Runs: ${counts}` }),
        board.leaders.length
          ? table(`Leaderboard of ${hunt.name}`, ['Rank', 'Player', 'Time'], board.leaders.map((leader) => el('tr', {},
            el('td', { text: leader.rank }), el('td', { class: 'label', text: leader.name ?? leader.deviceID }),
            el('td', { text: `${(leader.duration / 60).toFixed(1)} min` }))))
          : message('Nobody has finished yet.'),
        removeButton('hunt', `/v1/hunts/${hunt.id}`, hunt.name));
    });
    clear(huntsHolder).append(el('h3', { text: 'Treasure hunts' }), ...(sections.length ? sections : [message('No treasure hunts (proxima hunt create).')]));
    const rows = offers.map((offer) => el('tr', { 'data-offer': offer.id },
      el('td', { text: offer.id }), el('td', { text: offer.zoneID }),
      el('td', { class: 'label', text: offer.title }), el('td', { class: 'body', text: offer.body }),
      el('td', {}, removeButton('offer', `/v1/offers/${offer.id}`, offer.title))));
    clear(offersHolder).append(rows.length
      ? table('Offers', ['#', 'Zone', 'Title', 'Text', ''], rows, { id: 'offer-table' })
      : message('No offers (proxima offers create).'));
  }

  (async () => {
    try {
      const picker = await sitePicker('engagement-site', (site) => { siteID = site?.id ?? null; show().catch((error) => clear(result).append(message(error.message, 'error'))); }, { allowAll: true });
      container.append(picker.node, huntsHolder, offersHolder, result);
      await show();
    } catch (error) {
      container.append(message(`Could not load hunts and offers: ${error.message}`, 'error'));
    }
  })();
  return null;
}

export default { id: 'engagement', title: 'Hunts and offers', render };
