// Building the page: every text from outside goes in as text (textContent), never as HTML.

const SVG = 'http://www.w3.org/2000/svg';

function fill(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** An HTML element: el('td', {class: 'x'}, 'text', otherNode). Strings become text nodes. */
export function el(tag, attributes, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

/** An SVG element, the same way. */
export function svg(tag, attributes, ...children) {
  return fill(document.createElementNS(SVG, tag), attributes, children);
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** A labelled control: <label for=id>text</label> followed by the control. */
export function labelled(text, control) {
  const label = el('label', { for: control.id, text });
  return el('div', { class: 'field' }, label, control);
}

export function select(id, options, selected) {
  const node = el('select', { id });
  for (const option of options) {
    node.append(el('option', { value: option.value, text: option.text, selected: String(option.value) === String(selected) }));
  }
  return node;
}

export function table(caption, headings, rows, attributes) {
  return el('div', { class: 'table-wrap' },
    el('table', attributes ?? {},
      el('caption', { text: caption }),
      el('thead', {}, el('tr', {}, headings.map((heading) => el('th', { scope: 'col', text: heading })))),
      el('tbody', {}, rows)));
}

export function message(text, kind = 'note') {
  return el('p', { class: kind, role: kind === 'error' ? 'alert' : undefined, text });
}

/** Seconds since 1970 as local date and time; gateways' clocks may be virtual, so shown as given. */
export function formatTime(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '–';
  return new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function identity(item) {
  return `${item.uuid}:${item.major}:${item.minor}`;
}
