/**
 * The chat webview's page script: draws what the extension posts and posts back
 * what the person does. It builds every node with textContent and attributes, never
 * HTML strings, so nothing the model or a file says can become markup; the one
 * exception, an answer's Markdown, is rendered by markdown-it with HTML off, parsed
 * inertly and cut down to the tags and attributes markdown.ts allows.
 */

import { ALLOWED_TAGS, allowedAttribute, renderMarkdown } from '../view/markdown';
import type { Answer, Entry, FromView, SessionSummary, ToView, ToolEntry, ViewStatus } from '../view/protocol';
import { OUTPUT_KEEP, keepTail } from '../view/transcript';

interface VsCodeApi {
  postMessage(message: FromView): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const transcript = byId('transcript');
const prompt = byId('prompt') as HTMLTextAreaElement;
const askButton = byId('ask') as HTMLButtonElement;
const stopButton = byId('stop') as HTMLButtonElement;
const statusLine = byId('status');
const sessions = byId('sessions') as HTMLSelectElement;
const newButton = byId('new') as HTMLButtonElement;

const STATUS_WORDS: Record<ViewStatus, string> = {
  idle: 'idle',
  running: 'running…',
  awaiting_approval: 'awaiting approval',
  done: 'done',
  cancelled: 'cancelled',
  stopped: 'stopped (repeat guard or tool budget)',
  error: 'error',
};

function byId(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (element === null) {
    throw new Error(`the page has no #${id}`);
  }
  return element;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function button(label: string, className: string, message: FromView): HTMLButtonElement {
  const node = el('button', className, label);
  node.type = 'button';
  node.addEventListener('click', () => {
    vscode.postMessage(message);
  });
  return node;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${(ms / 1000).toFixed(1)} s`;
}

const ANSWER_BUTTONS: Record<Answer, { label: string; className: string }> = {
  allow: { label: 'Allow', className: 'allow' },
  always: { label: 'Allow always', className: 'secondary always' },
  deny: { label: 'Deny', className: 'secondary deny' },
};

function lineCount(text: string): number {
  const trimmed = text.endsWith('\n') ? text.slice(0, -1) : text;
  return trimmed === '' ? 0 : trimmed.split('\n').length;
}

/** A fold (closed unless the person opened it), keyed so a redraw keeps it open. */
function fold(key: string, label: string, text: string, className: string): HTMLElement {
  const details = el('details', className);
  details.dataset.fold = key;
  details.append(el('summary', '', label), el('pre', '', text));
  return details;
}

/** A running command's output, shown as it comes; scrolled to its end. */
function liveOutput(text: string): HTMLElement {
  const pre = el('pre', 'output live', text);
  pre.setAttribute('aria-label', 'output so far');
  return pre;
}

function renderTool(entry: ToolEntry): HTMLElement {
  const isPatch = entry.tool === 'patch';
  const card = el('section', `entry tool state-${entry.state}${isPatch ? ' patch' : ''}`);
  const head = el('div', 'tool-head');
  const args = typeof entry.arguments === 'object' ? entry.arguments : undefined;
  const commandLine = entry.tool === 'command' ? str(args?.command) : '';
  // A command's summary is its command line, shown whole below the head.
  head.append(el('span', 'tool-name', entry.tool), el('span', 'tool-summary', commandLine ? '' : entry.summary));
  // Who decided shows in the head, beside the state ("allowed", then "ok"; "denied" once).
  const decided = entry.approval === 'allowed' || entry.approval === 'denied' ? entry.approval : undefined;
  if (decided !== undefined) {
    head.append(el('span', `decision ${decided}`, decided));
  }
  if (decided !== entry.state) {
    head.append(el('span', 'tool-state', entry.state.replace('_', ' ')));
  }
  if (entry.durationMs !== undefined) {
    head.append(el('span', 'tool-time', seconds(entry.durationMs)));
  }
  card.append(head);

  if (commandLine) {
    card.append(el('pre', 'command-line', `$ ${commandLine}`));
  }
  if (entry.note) {
    card.append(el('div', 'note', entry.note));
  }

  if (entry.approval === 'pending' || entry.approval === 'deciding') {
    const actions = el('div', 'approval');
    const waiting = entry.approval === 'deciding';
    actions.append(el('span', 'approval-label', waiting ? 'answered…' : 'needs your approval'));
    const offered = entry.offers ?? (Object.keys(ANSWER_BUTTONS) as Answer[]);
    const buttons = offered.map((answer) =>
      button(ANSWER_BUTTONS[answer].label, ANSWER_BUTTONS[answer].className, { type: 'decide', callId: entry.id, answer }),
    );
    if (isPatch) {
      buttons.unshift(button('Show diff', 'secondary diff', { type: 'diff', callId: entry.id }));
    }
    for (const b of buttons) {
      b.disabled = waiting && !b.classList.contains('diff');
      actions.append(b);
    }
    card.append(actions);
  }

  if (entry.output !== undefined && entry.output !== '') {
    if (entry.state === 'running') {
      card.append(liveOutput(entry.output));
    } else {
      const lines = lineCount(entry.output);
      card.append(fold('output', `output · ${lines} line${lines === 1 ? '' : 's'}`, entry.output, 'tool-output'));
    }
  }
  if (entry.result !== undefined && entry.result !== '') {
    card.append(fold('result', 'result', entry.result, 'tool-result'));
  }
  return card;
}

/** Markdown as DOM: parsed inertly (nothing runs or loads), then cut to the allowed tags. */
function markdown(text: string): DocumentFragment {
  const parsed = new DOMParser().parseFromString(renderMarkdown(text), 'text/html');
  const fragment = document.createDocumentFragment();
  for (const node of [...parsed.body.childNodes]) {
    const clean = sanitize(node);
    if (clean !== null) {
      fragment.append(clean);
    }
  }
  for (const pre of fragment.querySelectorAll('pre')) {
    const copy = el('button', 'secondary copy', 'Copy');
    copy.type = 'button';
    copy.title = 'Copy the code';
    const code = pre.textContent;
    copy.addEventListener('click', () => {
      vscode.postMessage({ type: 'copy', text: code });
      copy.textContent = 'Copied';
      setTimeout(() => {
        copy.textContent = 'Copy';
      }, 1500);
    });
    const block = el('div', 'code-block');
    pre.replaceWith(block);
    block.append(pre, copy);
  }
  return fragment;
}

/** A copy of `node` with only allowed tags and attributes; other elements become their text. */
function sanitize(node: Node): Node | null {
  if (node.nodeType === Node.TEXT_NODE) {
    return document.createTextNode(node.textContent ?? '');
  }
  if (!(node instanceof Element)) {
    return null;
  }
  const tag = node.tagName.toLowerCase();
  if (!ALLOWED_TAGS.has(tag)) {
    return document.createTextNode(node.textContent);
  }
  const copy = document.createElement(tag);
  for (const attribute of node.attributes) {
    if (allowedAttribute(tag, attribute.name, attribute.value)) {
      copy.setAttribute(attribute.name, attribute.value);
    }
  }
  if (tag === 'a') {
    copy.title = copy.getAttribute('href') ?? '';
  }
  for (const child of node.childNodes) {
    const clean = sanitize(child);
    if (clean !== null) {
      copy.append(clean);
    }
  }
  return copy;
}

function render(entry: Entry): HTMLElement {
  let node: HTMLElement;
  switch (entry.kind) {
    case 'user':
      node = el('div', 'entry user', entry.text);
      if (entry.turn !== undefined && entry.files !== undefined && entry.files.length > 0) {
        // A turn that changed files can be taken back (the extension asks what of it).
        const rewind = button('Rewind', 'secondary rewind', { type: 'rewind', turn: entry.turn });
        rewind.title = `Take turn ${entry.turn} back: ${entry.files.join(', ')}`;
        const actions = el('div', 'turn-actions');
        actions.append(rewind);
        node.append(actions);
      }
      break;
    case 'assistant':
      node = el('div', 'entry assistant markdown');
      node.append(markdown(entry.text));
      break;
    case 'notice':
      node = el('div', `entry notice ${entry.tone}`, entry.text);
      break;
    case 'tool':
      node = renderTool(entry);
      break;
  }
  node.dataset.id = `${entry.kind}:${entry.id}`;
  return node;
}

function upsert(entry: Entry): void {
  const node = render(entry);
  const key = node.dataset.id ?? '';
  const old = [...transcript.children].find((c) => (c as HTMLElement).dataset.id === key);
  if (old !== undefined) {
    // A fold the person opened stays open, and the live output keeps its place.
    for (const open of old.querySelectorAll<HTMLDetailsElement>('details[open][data-fold]')) {
      const same = node.querySelector<HTMLDetailsElement>(`details[data-fold="${open.dataset.fold ?? ''}"]`);
      if (same !== null) {
        same.open = true;
      }
    }
    old.replaceWith(node);
    node.querySelector('pre.output.live')?.scrollTo({ top: Number.MAX_SAFE_INTEGER });
  } else {
    transcript.append(node);
  }
}

/** More output of a running command: appended to its card's live output. */
function appendOutput(callId: string, text: string): void {
  const card = [...transcript.children].find((c) => (c as HTMLElement).dataset.id === `tool:${callId}`);
  if (card === undefined) {
    return;
  }
  let pre = card.querySelector('pre.output.live');
  if (pre === null) {
    pre = liveOutput('');
    const after = card.querySelector('.approval, .tool-result');
    if (after?.classList.contains('tool-result')) {
      after.before(pre);
    } else if (after !== null) {
      after.after(pre);
    } else {
      card.append(pre);
    }
  }
  pre.textContent = keepTail(pre.textContent + text, OUTPUT_KEEP);
  pre.scrollTop = pre.scrollHeight;
}

let running = false;

function showStatus(status: ViewStatus): void {
  statusLine.textContent = STATUS_WORDS[status];
  statusLine.dataset.status = status;
  running = status === 'running';
  stopButton.hidden = !running;
  // One turn runs per session: the next prompt can be written meanwhile, and sent after.
  askButton.disabled = running;
  askButton.title = running ? 'A turn is running: wait for it, or Stop it' : 'Send (Enter)';
}

let shownSessions = '';

function showSessions(current: string | null, list: SessionSummary[]): void {
  const key = JSON.stringify(list);
  if (key === shownSessions) {
    sessions.value = current ?? '';
    return; // unchanged: an open drop-down stays open
  }
  shownSessions = key;
  const fresh = el('option', '', 'New session');
  fresh.value = '';
  const options = [fresh];
  for (const info of list) {
    const option = el('option', '', `${info.title || info.id} · ${info.status.replace(/_/g, ' ')}`);
    option.value = info.id;
    option.title = `${info.id}, updated ${info.updated}`;
    options.push(option);
  }
  sessions.replaceChildren(...options);
  sessions.value = current ?? '';
}

/** Whether the transcript is scrolled to (about) its end: then it follows what comes. */
function atEnd(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  const message = event.data;
  // Someone reading further up is left where they are.
  const follow = message.type === 'reset' || atEnd();
  switch (message.type) {
    case 'reset':
      transcript.replaceChildren(...message.entries.map(render));
      showStatus(message.status);
      sessions.value = message.session ?? '';
      break;
    case 'entries':
      message.entries.forEach(upsert);
      break;
    case 'output':
      appendOutput(message.callId, message.text);
      break;
    case 'status':
      showStatus(message.status);
      break;
    case 'sessions':
      showSessions(message.current, message.sessions);
      break;
  }
  if (follow) {
    transcript.scrollTop = transcript.scrollHeight;
  }
});

function ask(): void {
  const text = prompt.value;
  if (text.trim() === '' || running) {
    return;
  }
  prompt.value = '';
  vscode.postMessage({ type: 'ask', prompt: text });
  transcript.scrollTop = transcript.scrollHeight; // one's own prompt is always shown
}

askButton.addEventListener('click', ask);
prompt.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ask();
  }
});
stopButton.addEventListener('click', () => {
  vscode.postMessage({ type: 'stop' });
});
newButton.addEventListener('click', () => {
  vscode.postMessage({ type: 'open', session: null });
});
sessions.addEventListener('change', () => {
  vscode.postMessage({ type: 'open', session: sessions.value === '' ? null : sessions.value });
});
sessions.addEventListener('focus', () => {
  vscode.postMessage({ type: 'refresh' });
});

vscode.postMessage({ type: 'ready' });
