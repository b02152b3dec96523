// The dashboard's shell: sign-in, navigation, and one page at a time.
import { APIError, forgetToken, get, request, storeToken, storedToken } from './api.js';
import { clear, el, message } from './dom.js';
import { pageGroups } from './pages/index.js';

const nodes = {
  nav: document.getElementById('nav'),
  page: document.getElementById('page'),
  main: document.getElementById('main'),
  signIn: document.getElementById('sign-in'),
  form: document.getElementById('sign-in-form'),
  tokenField: document.getElementById('token'),
  error: document.getElementById('sign-in-error'),
  who: document.getElementById('who'),
  signOut: document.getElementById('sign-out'),
};

let session = null;
let stopPage = null;

const allPages = () => pageGroups.flatMap((group) => group.pages);

function showSignIn(reason) {
  session = null;
  stopPage?.();
  stopPage = null;
  clear(nodes.page);
  nodes.nav.hidden = true;
  nodes.signOut.hidden = true;
  nodes.who.textContent = '';
  nodes.signIn.hidden = false;
  nodes.error.textContent = reason ?? '';
  nodes.tokenField.focus();
}

async function startSession() {
  try {
    session = await get('/v1/session');
  } catch (error) {
    forgetToken();
    showSignIn(error instanceof APIError && error.status === 403
      ? 'This token may not read the dashboard (it needs admin, operator or read-only).'
      : `Sign-in failed: ${error.message}`);
    return;
  }
  nodes.signIn.hidden = true;
  nodes.signOut.hidden = false;
  nodes.who.textContent = `${session.name} (${session.role})`;
  buildNav();
  nodes.nav.hidden = false;
  route();
}

function buildNav() {
  clear(nodes.nav);
  for (const group of pageGroups) {
    const visible = group.pages.filter((page) => !page.needsOperator || session.canOperate);
    if (!visible.length) continue;
    const headingID = `nav-${group.id}`;
    nodes.nav.append(el('div', { class: 'nav-group' },
      el('h2', { id: headingID, text: group.title }),
      el('ul', { 'aria-labelledby': headingID },
        visible.map((page) => el('li', {}, el('a', { href: `#/${page.id}`, 'data-page': page.id, text: page.title }))))));
  }
}

function route() {
  if (!session) return;
  const id = location.hash.replace(/^#\/?/, '').split('?')[0];
  const page = allPages().find((candidate) => candidate.id === id && (!candidate.needsOperator || session.canOperate))
    ?? allPages()[0];
  for (const link of nodes.nav.querySelectorAll('a')) {
    if (link.dataset.page === page.id) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  stopPage?.();
  clear(nodes.page);
  const heading = el('h2', { id: 'page-title', tabindex: '-1', text: page.title });
  const body = el('div', { class: 'page-body', 'data-page': page.id });
  nodes.page.append(heading, body);
  document.title = `${page.title} – Proxima`;
  try {
    stopPage = page.render(body, { session }) ?? null;
  } catch (error) {
    body.append(message(`This page failed: ${error.message}`, 'error'));
  }
}

nodes.form.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = nodes.tokenField.value.trim();
  nodes.tokenField.value = '';
  if (!token) return;
  storeToken(token);
  startSession();
});

nodes.signOut.addEventListener('click', () => {
  forgetToken();
  history.replaceState(null, '', location.pathname);
  showSignIn('Signed out.');
});

window.addEventListener('hashchange', () => {
  route();
  document.getElementById('page-title')?.focus();
});

/** A one-time link `/#sign-in=CODE`: the code is exchanged (POST) for the token and removed from the address. */
async function boot() {
  const match = location.hash.match(/^#sign-in=([0-9a-f]{1,200})$/);
  if (match) {
    history.replaceState(null, '', location.pathname);
    try {
      const answer = await request('POST', '/v1/sign-in', { body: { code: match[1] } });
      storeToken(answer.token);
    } catch (error) {
      showSignIn(`The sign-in link did not work: ${error.message}`);
      return;
    }
  }
  if (storedToken()) startSession();
  else showSignIn();
}

boot();
