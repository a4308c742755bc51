// MCP servers' questions (elicitation) held for this chat: a card with the server's message and a form for its
// fields, answered with Accept or Decline. Everything in a question is the MCP server's text: it goes in as
// text (element), never as markup, and its field names never become ids or object keys with a meaning.

import { failure, showError } from '/web-chat/failure.js';
import { element } from '/web-chat/views.js';

const STRING_INPUT_TYPES = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

/** The control of one field: a text, number or date input, a checkbox, or a select of the enum's options. */
function control(field) {
  if (field.type === 'enum') {
    const select = element('select', 'question-input');
    const options = Array.isArray(field.options) ? field.options : [];
    if (!field.required || field.default === undefined) {
      const none = element('option', '', 'Choose…');
      none.value = '';
      select.append(none);
    }
    for (const option of options) {
      const node = element('option', '', String(option?.label ?? option?.value ?? ''));
      node.value = String(option?.value ?? '');
      select.append(node);
    }
    if (typeof field.default === 'string') select.value = field.default;
    return select;
  }
  const input = element('input', 'question-input');
  if (field.type === 'boolean') {
    input.type = 'checkbox';
    input.checked = field.default === true;
    return input;
  }
  if (field.type === 'number') {
    input.type = 'number';
    input.step = field.integer ? '1' : 'any';
    if (typeof field.minimum === 'number') input.min = String(field.minimum);
    if (typeof field.maximum === 'number') input.max = String(field.maximum);
    if (typeof field.default === 'number') input.value = String(field.default);
    return input;
  }
  input.type = STRING_INPUT_TYPES[field.format] ?? 'text';
  if (typeof field.minLength === 'number') input.minLength = field.minLength;
  if (typeof field.maxLength === 'number') input.maxLength = field.maxLength;
  if (typeof field.default === 'string') input.value = field.default;
  return input;
}

/** One field's row: its label (the server's title), its control and its description. */
function fieldRow(field, controlId) {
  const row = element('div', `question-field ${field.type === 'boolean' ? 'check' : ''}`);
  const input = control(field);
  input.id = controlId;
  input.required = field.required === true && field.type !== 'boolean';
  const label = element(
    'label',
    '',
    `${String(field.title ?? field.name ?? '')}${field.required ? ' *' : ''}`,
  );
  label.htmlFor = controlId;
  row.append(...(field.type === 'boolean' ? [input, label] : [label, input]));
  if (typeof field.description === 'string' && field.description !== '') {
    const hint = element('p', 'question-hint', field.description);
    hint.id = `${controlId}-hint`;
    input.setAttribute('aria-describedby', hint.id);
    row.append(hint);
  }
  return { row, input };
}

/** The accepted values by field name; an empty optional field is left out. */
function valuesOf(fields, inputs) {
  // No prototype: a field named __proto__ is a key like any other.
  const content = Object.create(null);
  fields.forEach((field, index) => {
    const input = inputs[index];
    const name = String(field.name);
    if (field.type === 'boolean') content[name] = input.checked;
    else if (input.value === '') return;
    else content[name] = field.type === 'number' ? Number(input.value) : input.value;
  });
  return content;
}

/** The card of a held question; `actions.answerQuestion(item, answer)` sends what the person chose. */
export function questionView(item, actions) {
  const card = element('li', 'question');
  const headingId = `question-${String(item.id).replace(/[^\w-]/g, '_')}`;
  card.setAttribute('aria-labelledby', headingId);
  const heading = element('p', 'card-title');
  heading.id = headingId;
  heading.append(element('code', '', item.server), ' asks');
  card.append(heading, element('p', 'question-message', item.message));
  const form = element('form', 'question-form');
  const fields = Array.isArray(item.fields) ? item.fields.filter((field) => typeof field === 'object') : [];
  const inputs = fields.map((field, index) => {
    const { row, input } = fieldRow(field, `${headingId}-field-${index}`);
    form.append(row);
    return input;
  });
  const accept = element('button', 'approve', 'Accept');
  accept.type = 'submit';
  const decline = element('button', 'deny', 'Decline');
  decline.type = 'button';
  decline.addEventListener('click', () => actions.answerQuestion(item, { action: 'decline' }));
  const controls = element('div', 'card-actions');
  controls.append(accept, decline);
  form.append(controls);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.answerQuestion(item, { action: 'accept', content: valuesOf(fields, inputs) });
  });
  for (const node of [...inputs, accept, decline]) node.disabled = item.sending === true;
  card.append(form);
  return card;
}

/**
 * The held questions of the open session as transcript items: added when the stream announces one (or the list
 * has it), taken out when it is settled or answered here. `deps`: the page, `api`, `sessionPath`, `push`, `remove`.
 */
export function setUpQuestions(deps) {
  /** Questions known to be settled: a list read before their settling must not bring them back. */
  const settled = new Set();
  const find = (id) => deps.page.items.find((item) => item.kind === 'question' && item.id === id);

  function add(question) {
    const id = String(question?.id ?? '');
    if (id === '' || settled.has(id) || find(id) !== undefined) return;
    deps.push({
      kind: 'question',
      id,
      server: String(question.server ?? ''),
      message: String(question.message ?? ''),
      fields: Array.isArray(question.fields) ? question.fields : [],
      expiresAt: Number(question.expiresAt ?? 0),
    });
  }

  function drop(id) {
    settled.add(String(id));
    const item = find(String(id));
    if (item !== undefined) deps.remove(item);
  }

  /** Shows the questions the session waits on now, and drops the cards of those it no longer does. */
  async function sync() {
    const answer = await deps.api(deps.sessionPath('/elicitations')).catch(() => undefined);
    if (!answer?.ok) return;
    const { elicitations } = await answer.json();
    const waiting = new Set(elicitations.map((question) => String(question.id)));
    for (const item of deps.page.items.filter((each) => each.kind === 'question')) {
      if (!waiting.has(item.id)) drop(item.id);
      else if (item.sending) {
        // Kept from a tab that left while sending: the answer did not arrive, so it can be given again.
        item.sending = false;
        deps.redraw(item);
      }
    }
    for (const question of elicitations) add(question);
  }

  async function answer(item, chosen) {
    item.sending = true;
    deps.redraw(item);
    const response = await deps
      .api(deps.sessionPath(`/elicitations/${encodeURIComponent(item.id)}`), { method: 'POST', json: chosen })
      .catch((error) => error);
    if (response instanceof Response && (response.ok || response.status === 404)) {
      // Answered, or gone meanwhile (answered elsewhere, expired, withdrawn): either way it waits no more.
      await response.body?.cancel();
      return drop(item.id);
    }
    item.sending = false;
    deps.redraw(item);
    showError(await failure(response));
  }

  return { add, drop, sync, answer };
}
