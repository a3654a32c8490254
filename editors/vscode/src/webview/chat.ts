/**
 * The chat webview's page script: draws what the extension posts and posts back
 * what the person does. It builds every node with textContent and attributes,
 * never HTML strings, so nothing the model or a file says can become markup.
 */

import type { Entry, FromView, SessionSummary, ToView, ToolEntry, ViewStatus } from '../view/protocol';

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

function renderTool(entry: ToolEntry): HTMLElement {
  const isPatch = entry.tool === 'patch';
  const card = el('section', `entry tool state-${entry.state}${isPatch ? ' patch' : ''}`);
  const head = el('div', 'tool-head');
  const args = typeof entry.arguments === 'object' ? entry.arguments : undefined;
  const commandLine = entry.tool === 'command' ? str(args?.command) : '';
  // A command's summary is its command line, shown whole below the head.
  head.append(el('span', 'tool-name', entry.tool), el('span', 'tool-summary', commandLine ? '' : entry.summary));
  const state = el('span', 'tool-state', entry.state.replace('_', ' '));
  head.append(state);
  if (entry.durationMs !== undefined) {
    head.append(el('span', 'tool-time', seconds(entry.durationMs)));
  }
  card.append(head);

  if (commandLine) {
    card.append(el('pre', 'command-line', `$ ${commandLine}`));
  }

  if (entry.approval === 'pending' || entry.approval === 'deciding') {
    const actions = el('div', 'approval');
    const waiting = entry.approval === 'deciding';
    actions.append(el('span', 'approval-label', waiting ? 'answered…' : 'needs your approval'));
    const buttons = [
      button('Allow', 'allow', { type: 'decide', callId: entry.id, answer: 'allow' }),
      button('Allow always', 'secondary always', {
        type: 'decide',
        callId: entry.id,
        answer: 'always',
      }),
      button('Deny', 'secondary deny', { type: 'decide', callId: entry.id, answer: 'deny' }),
    ];
    if (isPatch) {
      buttons.unshift(button('Show diff', 'secondary diff', { type: 'diff', callId: entry.id }));
    }
    for (const b of buttons) {
      b.disabled = waiting && !b.classList.contains('diff');
      actions.append(b);
    }
    card.append(actions);
  } else if (entry.approval === 'allowed' || entry.approval === 'denied') {
    card.append(el('div', `decision ${entry.approval}`, entry.approval));
  }

  if (entry.result !== undefined && entry.result !== '') {
    const details = el('details', 'tool-result');
    details.append(el('summary', '', 'result'), el('pre', '', entry.result));
    card.append(details);
  }
  return card;
}

function render(entry: Entry): HTMLElement {
  let node: HTMLElement;
  switch (entry.kind) {
    case 'user':
      node = el('div', 'entry user', entry.text);
      break;
    case 'assistant':
      node = el('div', 'entry assistant', entry.text);
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
    old.replaceWith(node);
  } else {
    transcript.append(node);
  }
}

function showStatus(status: ViewStatus): void {
  statusLine.textContent = STATUS_WORDS[status];
  statusLine.dataset.status = status;
  stopButton.hidden = status !== 'running';
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

function scrollToEnd(): void {
  transcript.scrollTop = transcript.scrollHeight;
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  const message = event.data;
  switch (message.type) {
    case 'reset':
      transcript.replaceChildren(...message.entries.map(render));
      showStatus(message.status);
      sessions.value = message.session ?? '';
      break;
    case 'entries':
      message.entries.forEach(upsert);
      break;
    case 'status':
      showStatus(message.status);
      break;
    case 'sessions':
      showSessions(message.current, message.sessions);
      break;
  }
  scrollToEnd();
});

function ask(): void {
  const text = prompt.value;
  if (text.trim() === '') {
    return;
  }
  prompt.value = '';
  vscode.postMessage({ type: 'ask', prompt: text });
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
