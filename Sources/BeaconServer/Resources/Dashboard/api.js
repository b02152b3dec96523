// Talking to the server: the token goes in the Authorization header, never in a URL.

const storageKey = 'proxima.token';

export function storedToken() {
  return sessionStorage.getItem(storageKey);
}

export function storeToken(token) {
  sessionStorage.setItem(storageKey, token);
}

export function forgetToken() {
  sessionStorage.removeItem(storageKey);
}

export class APIError extends Error {
  constructor(status, field, message) {
    super(field ? `${field}: ${message}` : message);
    this.status = status;
    this.field = field;
  }
}

async function failure(response) {
  let field = '';
  let text = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body?.error) {
      field = body.error.field ?? '';
      text = body.error.message ?? text;
    }
  } catch { /* not JSON: keep the status line */ }
  return new APIError(response.status, field, text);
}

/** A request to the API; JSON bodies are sent as JSON, strings as they are. */
export async function request(method, path, { body, contentType, accept = 'application/json', signal } = {}) {
  const headers = { Accept: accept };
  const token = storedToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload = body;
  if (body !== undefined && typeof body !== 'string') {
    payload = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  } else if (contentType) {
    headers['Content-Type'] = contentType;
  }
  const response = await fetch(path, { method, headers, body: payload, signal, credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return null;
  return accept === 'application/json' ? response.json() : response.text();
}

export const get = (path, options) => request('GET', path, options);

/**
 * Follows one of the server's Server-Sent Event streams. EventSource cannot send an
 * Authorization header, so the stream is read with fetch and parsed here. `pathAfter(lastID)`
 * gives the URL to (re)connect to, from the last `id:` seen (null before any); after a drop it
 * reconnects after a pause. `onBlocks` gets each batch of parsed `data:` objects.
 * Returns a function that stops it.
 */
export function followStream(pathAfter, onBlocks, { onState } = {}) {
  const controller = new AbortController();
  let lastID = null;
  let stopped = false;
  async function run() {
    while (!stopped) {
      try {
        const response = await fetch(pathAfter(lastID), {
          headers: { Accept: 'text/event-stream', Authorization: `Bearer ${storedToken()}` },
          signal: controller.signal, credentials: 'omit', cache: 'no-store',
        });
        if (!response.ok) throw await failure(response);
        onState?.('live');
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          const batch = [];
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const lines = block.split('\n');
            const idLine = lines.find((line) => line.startsWith('id: '));
            if (idLine && Number.isFinite(Number(idLine.slice(4)))) lastID = Number(idLine.slice(4));
            const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
            if (!data) continue;
            try { batch.push(JSON.parse(data)); } catch { /* a malformed block is skipped; the next one still counts */ }
          }
          if (batch.length) onBlocks(batch);
        }
      } catch (error) {
        if (stopped) return;
        onState?.(`reconnecting (${error.message})`);
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  run();
  return () => { stopped = true; controller.abort(); };
}

/** Follows GET /v1/events with the given filters, from the event id `after`. */
export function followEvents(query, onEvents, { after = 0, onState } = {}) {
  return followStream((lastID) => {
    const params = new URLSearchParams(query);
    params.set('after', String(lastID ?? after));
    return `/v1/events?${params}`;
  }, onEvents, { onState });
}
