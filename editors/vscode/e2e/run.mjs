// End to end in a real VS Code: code-server with the extension installed from its
// vsix, driven in Debian's chromium by puppeteer-core, against `tether serve` and the
// loopback provider stub (stub.py). The server is the workspace's .venv/bin/tether (no
// tether on PATH, tether.serverCommand unset); the provider's address and model come from
// the typed settings (initializationOptions), its key from "tether: Set the Provider's
// API Key" (SecretStorage, then didChangeConfiguration). The scenarios, a screenshot of
// each in test-output/:
//   0. the server was found in the workspace's .venv;
//   1. ask in the chat view: the answer streams in, with the stored key;
//   1b. the status bar shows the context used of the window and the session's tokens;
//   2. a patch approved from its card (which answers the open dialog by its call_id)
//      lands in the editor and is saved; Ctrl+Z undoes it;
//   3. a command approved from the notification dialog runs;
//   4. a command whose dialog is dismissed parks; its card then allows it (tether.approve);
//   5. a command denied with "tether: Deny Pending Calls" from the command palette;
//   6. the session picker reopens the session from tether.history;
//   7. [patch a.py, command "python -c 'import a; ...'"]: the command prints the patched value;
//   8. the same with b.py unsaved before the patch: the dialog, the card and the result name it;
//   9. a command's output shows live in its card, folded once it ends;
//  10. the answer's Markdown is rendered (code blocks too), its HTML shown as text;
//  11. the keybindings: Ctrl+K A asks, Ctrl+K X stops the turn (the output so far is kept).
//
// Environment: TETHER_PYTHON (a Python with tether installed; default python3),
// CHROMIUM (default /usr/bin/chromium), E2E_HEADFUL=1 to watch.

import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const output = path.join(root, 'test-output');
const vsix = path.join(root, 'tether.vsix');
const node24 = path.join(here, 'node', 'node_modules', '.bin');
const codeServer = path.join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const python = process.env.TETHER_PYTHON ?? 'python3';
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const STEP_MS = 30_000;

// Unix sockets (code-server's, VS Code's) must have short paths: state lives in the
// clone unless its path is too long for them.
const inClone = path.join(output, 'run');
const state = inClone.length <= 50 ? inClone : path.join(os.tmpdir(), 'tether-e2e');
const dirs = {
  ws: path.join(state, 'ws'),
  data: path.join(state, 'data'),
  ext: path.join(state, 'ext'),
  home: path.join(state, 'home'),
  tmp: path.join(state, 'tmp'),
  chromium: path.join(state, 'chromium'),
  tether: path.join(state, 'tether-home'),
  bin: path.join(state, 'bin'),
};
const API_KEY = 'sk-e2e-from-secret-storage';

// PATH for VS Code and the server, less any folder with a `tether` in it (pipx's, say): the
// extension is to find the workspace's .venv/bin/tether.
const hidden = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '' && fs.existsSync(path.join(dir, 'tether')));
const searchPath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !hidden.includes(dir)).join(path.delimiter);

const children = [];
const started = Date.now();

function log(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`[${seconds}s] ${message}`);
}

/** Environment for the processes we start: HOME and TMPDIR inside `state`, no tether keys. */
function childEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('TETHER_') && !['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'].includes(key)) {
      env[key] = value;
    }
  }
  return { ...env, HOME: dirs.home, TMPDIR: dirs.tmp, XDG_CONFIG_HOME: path.join(dirs.home, '.config'), ...extra };
}

function start(name, command, args, options = {}, keepStdout = false) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, ...options });
  const logFile = fs.createWriteStream(path.join(output, `${name}.log`));
  if (!keepStdout) {
    child.stdout.pipe(logFile);
  }
  child.stderr.pipe(logFile);
  children.push(child);
  return child;
}

function stopAll() {
  for (const child of children.reverse()) {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  }
}

async function freePort() {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

async function until(what, probe, timeout = STEP_MS) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      const value = await probe();
      if (value) {
        return value;
      }
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (${last.message})` : ''}`);
}

function prepare(stubUrl) {
  fs.rmSync(state, { recursive: true, force: true });
  for (const dir of Object.values(dirs)) {
    fs.mkdirSync(dir, { recursive: true });
  }
  fs.writeFileSync(path.join(dirs.ws, 'app.py'), "x = 1\nname = 'tether'\nprint(name, x)\n");
  fs.writeFileSync(path.join(dirs.ws, 'a.py'), 'X = 1\n');
  fs.writeFileSync(path.join(dirs.ws, 'b.py'), 'Y = 1\n');
  // A repository of its own: the clone that holds test-output/ ignores it, and a turn's
  // checkpoint (what Rewind takes back) is a snapshot of the repository's work tree.
  execFileSync('git', ['init', '-q', dirs.ws]);
  fs.writeFileSync(path.join(dirs.ws, '.gitignore'), '.venv/\n');
  const pythonPath = execFileSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  // The workspace's own tether, as `python -m venv .venv && .venv/bin/pip install tether-lsp`
  // would leave it; the extension finds it there (nothing named tether is on PATH).
  const venvBin = path.join(dirs.ws, '.venv', 'bin');
  fs.mkdirSync(venvBin, { recursive: true });
  fs.writeFileSync(path.join(venvBin, 'tether'), `#!/bin/sh\nexec '${pythonPath}' -m tether "$@"\n`, { mode: 0o755 });
  // `python` for the commands the model runs: the server's own interpreter.
  fs.symlinkSync(pythonPath, path.join(dirs.bin, 'python'));
  const settings = {
    'tether.provider.baseUrl': stubUrl,
    'tether.provider.model': 'stub-model',
    'tether.env': {
      TETHER_HOME: dirs.tether,
      PATH: `${dirs.bin}${path.delimiter}${searchPath}`,
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    },
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.editor.enablePreview': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.colorTheme': 'Default Dark Modern',
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': false,
    'chat.disableAIFeatures': true,
    'editor.minimap.enabled': false,
    'files.hotExit': 'off',
    'files.autoSave': 'off',
    'window.restoreWindows': 'none',
    'git.openRepositoryInParentFolders': 'never',
  };
  fs.mkdirSync(path.join(dirs.data, 'User'), { recursive: true });
  fs.writeFileSync(path.join(dirs.data, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
}

// ---- the page ----

const norm = (text) => (text ?? '').replace(/\u00a0/g, ' ');

async function chatFrame(page, timeout = STEP_MS) {
  return until(
    'the chat view',
    async () => {
      for (const frame of page.frames()) {
        if (await frame.$('#prompt').catch(() => null)) {
          return frame;
        }
      }
      return undefined;
    },
    timeout,
  );
}

/**
 * Open the chat view. On a cold first start the webview can miss the first command, and
 * once (a fresh clone in CI) it never came: then the window is reloaded and asked again.
 */
async function openChat(page) {
  const attempts = [
    ['', STEP_MS],
    ['the chat view did not open yet: running tether: Open Chat again', 60_000],
    ['the chat view did not open: reloading the window and asking once more', 90_000],
  ];
  for (const [index, [why, timeout]] of attempts.entries()) {
    if (why !== '') {
      log(why);
      log(`frames: ${page.frames().map((f) => f.url().slice(0, 120)).join(' | ')}`);
      await shot(page, `chat-view-missed-${index}`).catch(() => undefined);
    }
    if (index === 2) {
      await page.reload();
      await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
      await until('the tether status bar item', async () => (await statusBar(page)).includes('tether: idle'), 60_000);
    }
    await runCommand(page, 'tether: Open Chat');
    try {
      return await chatFrame(page, timeout);
    } catch (error) {
      if (index === attempts.length - 1) {
        throw error;
      }
    }
  }
  throw new Error('unreachable');
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = await page.waitForSelector('.quick-input-widget input', { visible: true });
  await input.type(title);
  await until(`the command "${title}" in the palette`, () =>
    page.$$eval('.quick-input-list .monaco-list-row', (rows, wanted) => rows.some((r) => r.textContent.includes(wanted)), title),
  );
  await page.keyboard.press('Enter');
  // The palette closes, or gives way to the command's own input.
  await until(`the palette to close after "${title}"`, () =>
    page.$$eval(
      '.quick-input-widget',
      (all, wanted) => all.every((w) => window.getComputedStyle(w).display === 'none' || !(w.querySelector('input')?.value ?? '').includes(wanted)),
      title,
    ),
  );
}

async function openFile(page, name) {
  await page.keyboard.down('Control');
  await page.keyboard.press('p');
  await page.keyboard.up('Control');
  const input = await page.waitForSelector('.quick-input-widget input', { visible: true });
  await input.type(name);
  await until(`${name} in quick open`, () =>
    page.$$eval('.quick-input-list .monaco-list-row', (rows, wanted) => rows.some((r) => r.textContent.includes(wanted)), name),
  );
  await page.keyboard.press('Enter');
  await until(`${name} as the active editor`, async () => (await activeTab(page)) === name);
  await until(`${name}'s text on screen`, async () => (await editorText(page)).trim() !== '');
}

/** The title of the active editor's tab. */
async function activeTab(page) {
  return page.$eval('.editor-group-container.active .tab.active', (tab) => tab.getAttribute('aria-label') ?? '');
}

/** The text of the active (non-diff) editor, with Monaco's non-breaking spaces undone. */
async function editorText(page) {
  const text = await page.$eval('.editor-group-container.active .monaco-editor .view-lines', (lines) =>
    [...lines.children]
      .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
      .map((line) => line.textContent)
      .join('\n'),
  );
  return norm(text);
}

async function statusBar(page) {
  return page.$$eval('.statusbar-item', (items) => items.map((i) => i.textContent).join(' | '));
}

/** Whether the active editor's tab shows unsaved changes. */
async function tabDirty(page) {
  return page.$eval('.editor-group-container.active .tab.active', (tab) => tab.classList.contains('dirty'));
}

/** Presses `key` with `modifier` held. */
async function keys(page, modifier, key) {
  await page.keyboard.down(modifier);
  await page.keyboard.press(key);
  await page.keyboard.up(modifier);
}

/** The requests the provider stub received so far: bodies and Authorization headers. */
function stubRequests() {
  const file = path.join(output, 'stub-requests.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** The texts of the toasts on screen. */
async function toasts(page) {
  return page.$$eval('.notifications-toasts .notification-toast', (all) => all.map((t) => t.textContent ?? ''));
}

/** Clicks the button titled `title` on the toast whose text has `words`. */
async function clickToast(page, words, title) {
  const clicked = await page.$$eval(
    '.notifications-toasts .notification-toast',
    (all, wanted) => {
      const toast = all.find((t) => (t.textContent ?? '').includes(wanted.words));
      const button = [...(toast?.querySelectorAll('.monaco-button') ?? [])].find((b) => b.textContent.trim() === wanted.title);
      button?.click();
      return button !== undefined;
    },
    { words, title },
  );
  if (!clicked) {
    throw new Error(`no "${title}" button on the notification about ${words}`);
  }
}

/** The last tool card: its state, command line, note, live output, folded output and result. */
async function lastCard(frame) {
  return frame.$$eval('.entry.tool', (cards) => {
    const card = cards[cards.length - 1];
    const text = (selector) => card?.querySelector(selector)?.textContent ?? '';
    return {
      className: card?.className ?? '',
      command: text('.command-line'),
      note: text('.note'),
      live: text('pre.output.live'),
      folded: text('details.tool-output pre'),
      foldedOpen: card?.querySelector('details.tool-output')?.open ?? false,
      result: text('.tool-result pre'),
    };
  });
}

/** Allows, from its card, the call that waits (there is one at a time) and is about `what`. */
async function allowOnCard(frame, what) {
  await until(`a waiting card about ${what}`, () =>
    frame.$$eval(
      '.entry.tool.state-waiting',
      (cards, wanted) => cards.some((c) => c.textContent.includes(wanted) && c.querySelector('button.allow:not([disabled])')),
      what,
    ),
  );
  await frame.$$eval(
    '.entry.tool.state-waiting',
    (cards, wanted) => cards.find((c) => c.textContent.includes(wanted))?.querySelector('button.allow')?.click(),
    what,
  );
}

async function ask(frame, prompt) {
  await frame.click('#prompt');
  await frame.type('#prompt', prompt);
  const box = await frame.$('#prompt');
  await box.press('Enter');
}

async function chatStatus(frame) {
  return frame.$eval('#status', (s) => s.textContent);
}

async function lastAnswer(frame) {
  // The answer's text as rendered (Markdown's paragraphs end in a newline).
  return frame.$$eval('.entry.assistant', (all) => (all.length ? all[all.length - 1].textContent.trim() : ''));
}

async function shot(page, name) {
  await new Promise((resolve) => setTimeout(resolve, 400)); // let notifications finish sliding in
  const file = path.join(output, `${name}.png`);
  await page.screenshot({ path: file });
  log(`screenshot ${path.relative(root, file)}`);
}

// ---- the scenarios ----

async function streamedAnswer(page, frame, expected) {
  await frame.evaluate(() => {
    const seen = [];
    window.__tetherSeen = seen;
    new MutationObserver(() => {
      const all = document.querySelectorAll('.entry.assistant');
      const last = all[all.length - 1];
      const text = last?.textContent.trim();
      if (text && seen[seen.length - 1] !== text) {
        seen.push(text);
      }
    }).observe(document.getElementById('transcript'), { childList: true, subtree: true, characterData: true });
  });
  await ask(frame, 'Say hello, please.');
  await until('the answer to start', async () => {
    const text = await lastAnswer(frame);
    return text.length > 0 && text.length < expected.length / 2;
  });
  await frame.page().screenshot({ path: path.join(output, '1a-ask-streaming.png') });
  log('screenshot test-output/1a-ask-streaming.png (mid-stream)');
  await until('the streamed answer', async () => (await lastAnswer(frame)) === expected && (await chatStatus(frame)) === 'done');
  const seen = await frame.evaluate(() => window.__tetherSeen);
  const partial = seen.filter((text) => text !== expected);
  if (partial.length < 3 || !partial.every((text) => expected.startsWith(text))) {
    throw new Error(`the answer did not stream: saw ${JSON.stringify(seen)}`);
  }
  log(`answer streamed in ${seen.length} steps`);
  await shot(page, '1b-ask-streamed');
}

async function patchFromCard(page, frame) {
  await openFile(page, 'app.py');
  await until('app.py in the editor', async () => (await editorText(page)).includes('x = 1'));
  await ask(frame, 'Make x equal 2 in app.py.');
  await frame.waitForSelector('.entry.tool.patch button.allow', { visible: true, timeout: STEP_MS });
  log('the patch card asks');

  await frame.click('.entry.tool.patch button.diff');
  await until("the diff editor on tether's patch", () =>
    page.$$eval('.tabs-container .tab.active', (tabs) => tabs.some((t) => t.textContent.includes("tether's patch"))),
  );
  const modified = await until('the proposed side of the diff', async () => {
    const text = norm(await page.$eval('.monaco-diff-editor .editor.modified .view-lines', (v) => v.textContent));
    return text.includes('x = 2') ? text : undefined;
  });
  log(`the diff shows the proposed text (${modified.length} chars)`);
  await shot(page, '2a-patch-card-and-diff');

  await page.click('.editor-group-container.active .tab.active .tab-actions .action-label');
  await until('the diff editor to close', async () => (await activeTab(page)) === 'app.py');

  await frame.click('.entry.tool.patch button.allow');
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  const answer = await lastAnswer(frame);
  if (!answer.includes('Patched app.py')) {
    throw new Error(`unexpected answer after the patch: ${answer}`);
  }
  await until('x = 2 in the app.py buffer', async () => (await editorText(page)).includes('x = 2'));
  const appPy = path.join(dirs.ws, 'app.py');
  await until('the patch saved to app.py (it had no unsaved changes)', () => fs.readFileSync(appPy, 'utf8').includes('x = 2'));
  if (await tabDirty(page)) {
    throw new Error('app.py still has unsaved changes after the patch');
  }
  log('the patch landed in the editor buffer and was saved');
  await shot(page, '2b-patch-applied');

  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await keys(page, 'Control', 'z');
  await until('Ctrl+Z to undo the patch', async () => {
    const text = await editorText(page);
    return text.includes('x = 1') && !text.includes('x = 2');
  });
  await until('the undone buffer to differ from the file', () => tabDirty(page));
  log('Ctrl+Z undid it in the buffer');
  await shot(page, '2c-patch-undone');
  await keys(page, 'Control', 's');
  await until('app.py saved as it was', () => fs.readFileSync(appPy, 'utf8').includes('x = 1'));
}

async function commandFromDialog(page, frame) {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await ask(frame, 'Make a file called made.txt.');
  const toast = '.notifications-toasts .notification-toast';
  await until('the approval dialog', () =>
    page.$$eval(toast, (all) => all.some((t) => t.textContent.includes('tether wants to run command'))),
  );
  await until('the status bar to say awaiting approval', async () => (await statusBar(page)).includes('tether: awaiting approval'));
  log('the notification asks; the status bar says awaiting approval');
  await shot(page, '3a-command-dialog');

  const clicked = await page.$$eval(`${toast} .monaco-button`, (buttons) => {
    const allow = buttons.find((b) => b.textContent.trim() === 'Allow');
    allow?.click();
    return allow !== undefined;
  });
  if (!clicked) {
    throw new Error('no Allow button on the dialog');
  }
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  const made = path.join(dirs.ws, 'made.txt');
  await until('made.txt', () => fs.existsSync(made) && fs.readFileSync(made, 'utf8') === 'made-by-tether\n');
  await frame.waitForSelector('.entry.tool.state-ok .decision.allowed', { timeout: STEP_MS });
  await until('the status bar to say idle', async () => (await statusBar(page)).includes('tether: idle'));
  log('the command ran; its card shows ok');
  await shot(page, '3b-command-ran');
}

async function parkedThenCard(page, frame) {
  await ask(frame, 'Write parked.txt.');
  const toast = '.notifications-toasts .notification-toast';
  await until('the approval dialog', () =>
    page.$$eval(toast, (all) => all.some((t) => t.textContent.includes('parked-then-allowed'))),
  );
  await runCommand(page, 'Notifications: Clear All Notifications'); // dismissed: the call parks
  await until('the turn to park', async () => (await chatStatus(frame)) === 'awaiting approval');
  await until('the status bar to say awaiting approval', async () => (await statusBar(page)).includes('tether: awaiting approval'));
  log('the dismissed dialog parked the call');
  await shot(page, '4a-parked');
  await frame.click('.entry.tool.state-waiting button.allow');
  await until('the resumed turn to end', async () => (await chatStatus(frame)) === 'done');
  const file = path.join(dirs.ws, 'parked.txt');
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== 'parked-then-allowed\n') {
    throw new Error('the parked command did not run after its card allowed it');
  }
  const answer = await lastAnswer(frame);
  if (!answer.startsWith('Resumed after the wait')) {
    throw new Error(`unexpected answer after resuming: ${answer}`);
  }
  log('the card resumed the parked turn; parked.txt is there');
  await shot(page, '4b-parked-allowed');
}

async function denyFromPalette(page, frame) {
  await ask(frame, 'Remove made.txt.');
  await frame.waitForSelector('.entry.tool.state-waiting button.deny', { visible: true, timeout: STEP_MS });
  await runCommand(page, 'tether: Deny Pending Calls');
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  await frame.waitForSelector('.entry.tool.state-denied .decision.denied', { timeout: STEP_MS });
  if (!fs.existsSync(path.join(dirs.ws, 'made.txt'))) {
    throw new Error('the denied command ran');
  }
  const answer = await lastAnswer(frame);
  if (answer !== 'Understood: made.txt stays.') {
    throw new Error(`unexpected answer after the denial: ${answer}`);
  }
  log('denied from the palette; made.txt is still there');
  await shot(page, '5-deny-from-palette');
}

async function reopenFromPicker(page, frame) {
  const session = await frame.$eval('#sessions', (select) => select.value);
  await frame.click('#new');
  await until('an empty transcript', async () => (await frame.$$('.entry')).length === 0);
  await frame.select('#sessions', session);
  const texts = await until('the session from its history', async () => {
    const all = await frame.$$eval('.entry', (entries) => entries.map((e) => e.textContent));
    return all.length >= 14 ? all : undefined;
  });
  const wanted = ['Say hello, please.', 'Make x equal 2 in app.py.', 'The command made made.txt.', 'Understood: made.txt stays.'];
  for (const text of wanted) {
    if (!texts.some((t) => t.includes(text))) {
      throw new Error(`the reopened session lacks "${text}": ${JSON.stringify(texts)}`);
    }
  }
  const timed = await frame.$$eval('.entry.tool .tool-time', (times) => times.map((t) => t.textContent));
  if (timed.length < 2) {
    throw new Error(`the reopened calls lack their timing: ${JSON.stringify(timed)}`);
  }
  log(`reopened ${session} from its history: ${texts.length} entries, timings ${timed.join(', ')}`);
  await shot(page, '6-session-reopened');
}

async function foundInVenv(page) {
  const logs = path.join(dirs.data, 'logs');
  const found = await until("the extension's log to say how it found tether", () => {
    const files = fs.readdirSync(logs, { recursive: true }).map((f) => path.join(logs, f));
    for (const file of files) {
      if (file.endsWith('.log') && fs.statSync(file).isFile()) {
        const line = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.includes('starting ') && l.includes('(found by '));
        if (line) {
          return line;
        }
      }
    }
    return undefined;
  });
  if (!found.includes(`${path.join(dirs.ws, '.venv', 'bin', 'tether')} serve --stdio (found by venv)`) &&
      !found.includes(`${path.join(dirs.ws, '.venv', 'bin', 'tether')} serve (found by venv)`)) {
    throw new Error(`tether was not started from the workspace's .venv: ${found}`);
  }
  log(`the log says: ${found.trim().replace(/^.*\] /, '')}`);
  await statusBar(page);
}

async function setApiKey(page) {
  await runCommand(page, "tether: Set the Provider's API Key");
  await page.waitForSelector('.quick-input-widget input[type="password"]', { visible: true, timeout: STEP_MS });
  await page.keyboard.type(API_KEY);
  await page.keyboard.press('Enter');
  await until('the key to be stored', async () => (await toasts(page)).some((t) => t.includes('secret storage')));
  log("the API key is in VS Code's secret storage");
}

async function keyReachedProvider() {
  const requests = stubRequests();
  const auth = requests[0]?.authorization;
  if (auth !== `Bearer ${API_KEY}`) {
    throw new Error(`the first request carried ${JSON.stringify(auth)}, not the stored key`);
  }
  if (requests[0].body.model !== 'stub-model') {
    throw new Error(`the model was ${requests[0].body.model}, not tether.provider.model`);
  }
  const settings = fs.readFileSync(path.join(dirs.data, 'User', 'settings.json'), 'utf8');
  if (settings.includes(API_KEY)) {
    throw new Error('the API key is in settings.json');
  }
  log('the provider got the stored key (not in settings.json) and the model from tether.provider.model');
}

async function usageInStatusBar(page) {
  const text = await until('the status bar to show usage', async () => {
    const bar = await statusBar(page);
    return /tether: idle · ctx \S+\/\S+ \(\d+%\) · \S+ tok/.test(bar) ? bar : undefined;
  });
  const tooltip = await page.$$eval('.statusbar-item', (items) =>
    items.map((i) => i.getAttribute('aria-label') ?? '').find((l) => l.includes('tether')),
  );
  log(`the status bar: ${text.split(' | ').find((t) => t.includes('tether'))}${tooltip ? ` (${tooltip.replace(/\n/g, '; ')})` : ''}`);
  await shot(page, '1c-usage-in-status-bar');
}

async function patchThenCommand(page, frame) {
  await openFile(page, 'a.py');
  await until('a.py in the editor', async () => (await editorText(page)).includes('X = 1'));
  await runCommand(page, 'Notifications: Clear All Notifications');
  await ask(frame, 'Make X equal 2 in a.py, then import it.');
  await allowOnCard(frame, 'a.py');
  await allowOnCard(frame, 'import a');
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  const card = await lastCard(frame);
  const seen = card.folded + card.result;
  if (!seen.includes('a.X = 2')) {
    throw new Error(`the command did not see the patched a.py: ${JSON.stringify(card)}`);
  }
  if (card.note.includes('Unsaved')) {
    throw new Error(`the command's card says something is unsaved: ${card.note}`);
  }
  if (!fs.readFileSync(path.join(dirs.ws, 'a.py'), 'utf8').includes('X = 2') || (await tabDirty(page))) {
    throw new Error('a.py was not saved after the patch');
  }
  log('the command printed a.X = 2: the patch was saved before it ran');
  await shot(page, '7-patch-then-command');
}

async function rewindFromChat(page, frame) {
  // The turn before patched a.py (X = 2) and ran a command: its prompt offers Rewind.
  await until('the Rewind button on the patching turn', () =>
    frame.$$eval('.entry.user', (all) => all.some((e) => e.textContent.includes('Make X equal 2') && e.querySelector('button.rewind'))),
  );
  await frame.$$eval('.entry.user', (all) =>
    all.find((e) => e.textContent.includes('Make X equal 2'))?.querySelector('button.rewind')?.click(),
  );
  const picker = await until('the quick pick asking what to take back', async () => {
    const text = await page.$$eval('.quick-input-widget', (all) =>
      all.filter((w) => window.getComputedStyle(w).display !== 'none').map((w) => w.innerText).join('\n'),
    );
    return text.includes('Files') && text.includes('Conversation') ? text : undefined;
  });
  log(`rewind asks: ${JSON.stringify(picker.split('\n').slice(0, 4))}`);
  await shot(page, '7b-rewind-pick');
  await page.keyboard.press('Enter'); // "Files", the first and the default
  await until('a.py to be X = 1 again on disk and in the editor', async () =>
    fs.readFileSync(path.join(dirs.ws, 'a.py'), 'utf8') === 'X = 1\n' && (await editorText(page)).includes('X = 1'),
  );
  const notice = await until('the rewind in the transcript', () =>
    frame.$$eval('.entry', (all) => all.map((e) => e.textContent).find((t) => t.includes('Rewound turn') && t.includes('restored a.py'))),
  );
  if (await tabDirty(page)) {
    throw new Error('a.py was left unsaved after the rewind (it had no unsaved change before)');
  }
  log(`rewound: ${notice}`);
  await shot(page, '7c-rewound');
}

async function dirtyThenCommand(page, frame) {
  await openFile(page, 'b.py');
  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await keys(page, 'Control', 'End');
  await page.keyboard.type('# the person was here\n');
  await until('b.py to have unsaved changes', () => tabDirty(page));
  await runCommand(page, 'Notifications: Clear All Notifications');
  await ask(frame, 'Make Y equal 2 in b.py, then import it.');
  await allowOnCard(frame, 'b.py');
  const dialog = await until('the command dialog naming b.py', async () =>
    (await toasts(page)).find((t) => t.includes('import b') && t.includes('Unsaved in the editor')),
  );
  if (!dialog.slice(dialog.indexOf('Unsaved in the editor')).includes('b.py')) {
    throw new Error(`the dialog does not name b.py as unsaved: ${dialog}`);
  }
  await until('the card to show the same warning', async () => (await lastCard(frame)).note.includes('b.py'));
  log('the dialog and the card say b.py is unsaved');
  await shot(page, '8a-dirty-dialog');
  await clickToast(page, 'import b', 'Allow');
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  const card = await lastCard(frame);
  if (!(card.folded + card.result).includes('b.Y = 1')) {
    throw new Error(`the command should have seen b.py on disk: ${JSON.stringify(card)}`);
  }
  if (!card.result.includes('b.py')) {
    throw new Error(`the command's result does not name b.py: ${card.result}`);
  }
  if (!fs.readFileSync(path.join(dirs.ws, 'b.py'), 'utf8').startsWith('Y = 1') || !(await tabDirty(page))) {
    throw new Error("b.py had the person's unsaved changes: it must not have been saved");
  }
  const buffer = await editorText(page);
  if (!buffer.includes('Y = 2') || !buffer.includes('# the person was here')) {
    throw new Error(`the b.py buffer should hold the patch and the person's line: ${buffer}`);
  }
  log(`the result names b.py; b.py stays unsaved: ${card.result.split('\n').find((l) => l.includes('b.py'))}`);
  await shot(page, '8b-dirty-result');
}

async function liveOutput(page, frame) {
  await ask(frame, 'Count slowly.');
  await allowOnCard(frame, 'tick');
  const live = await until('the output to show while the command runs', async () => {
    const card = await lastCard(frame);
    return card.className.includes('state-running') && card.live.includes('tick 2') && !card.live.includes('tick 6')
      ? card.live
      : undefined;
  });
  log(`live: ${JSON.stringify(live)}`);
  await shot(page, '9a-output-live');
  await until('the turn to end', async () => (await chatStatus(frame)) === 'done');
  const card = await lastCard(frame);
  if (card.live !== '' || !card.folded.includes('tick 6') || card.foldedOpen) {
    throw new Error(`the ended command's output should be folded: ${JSON.stringify(card)}`);
  }
  log('the output is folded once the command ended');
  await shot(page, '9b-output-folded');
}

async function markdownAnswer(page, frame) {
  await ask(frame, 'Show me some markdown.');
  await until('the answer', async () => (await chatStatus(frame)) === 'done' && (await lastAnswer(frame)).includes('a real one'));
  const seen = await frame.$$eval('.entry.assistant', (all) => {
    const last = all[all.length - 1];
    return {
      strong: last.querySelector('strong')?.textContent,
      code: last.querySelector('p code')?.textContent,
      block: last.querySelector('.code-block pre code.language-python')?.textContent,
      copy: last.querySelector('.code-block button.copy') !== null,
      links: [...last.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      text: last.textContent,
      scripts: document.querySelectorAll('#transcript script, #transcript img, #transcript [onerror]').length,
      title: document.title,
      csp: document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '',
    };
  });
  const problems = [];
  if (seen.strong !== 'bold' || seen.code !== 'inline code') problems.push('emphasis or inline code');
  if (seen.block !== "print('fenced')\n" || !seen.copy) problems.push('the code block');
  if (JSON.stringify(seen.links) !== JSON.stringify(['https://example.com/docs'])) problems.push(`links ${JSON.stringify(seen.links)}`);
  if (seen.scripts !== 0 || seen.title === 'pwned') problems.push('raw HTML became markup');
  if (!seen.text.includes("<script>document.title = 'pwned'</script>")) problems.push('the HTML is not shown as text');
  if (!seen.csp.includes("default-src 'none'") || seen.csp.includes('unsafe')) problems.push(`the CSP: ${seen.csp}`);
  if (problems.length > 0) {
    throw new Error(`markdown: ${problems.join('; ')} (${JSON.stringify(seen)})`);
  }
  log('bold, inline code, a python block with Copy, one https link; the HTML stayed text; CSP strict');
  await shot(page, '10-markdown');
}

async function keybindings(page, frame) {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await keys(page, 'Control', 'k');
  await page.keyboard.press('a');
  await until("Ctrl+K A to open tether's prompt", () =>
    page.$$eval('.quick-input-widget', (all) => all.some((w) => window.getComputedStyle(w).display !== 'none' && w.innerText.includes('Ask tether'))),
  );
  const input = await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: STEP_MS });
  await input.type('Sleep a while.');
  await page.keyboard.press('Enter');
  await allowOnCard(frame, 'sleep 30');
  await until('the long command to start', async () => (await lastCard(frame)).live.includes('started'));
  const startedAt = Date.now();
  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await keys(page, 'Control', 'k');
  await page.keyboard.press('x');
  await until('Ctrl+K X to stop the turn', async () => (await chatStatus(frame)) === 'cancelled', 15_000);
  const card = await lastCard(frame);
  if (!(card.folded + card.result).includes('started')) {
    throw new Error(`the stopped command lost its output: ${JSON.stringify(card)}`);
  }
  log(`Ctrl+K A asked, Ctrl+K X stopped the turn ${((Date.now() - startedAt) / 1000).toFixed(1)} s later; the output so far is kept`);
  await shot(page, '11-stopped-by-keybinding');
}

// ---- main ----

async function main() {
  fs.mkdirSync(output, { recursive: true });
  for (const old of fs.readdirSync(output)) {
    if (old.endsWith('.png') || old.endsWith('.log')) {
      fs.rmSync(path.join(output, old));
    }
  }
  const record = path.join(output, 'stub-requests.jsonl');
  const stub = start('stub', python, [path.join(here, 'stub.py'), record], {}, true);
  const [line] = await Promise.race([
    once(stub.stdout, 'data'),
    once(stub, 'exit').then(() => {
      throw new Error('the provider stub did not start (see test-output/stub.log)');
    }),
  ]);
  const stubUrl = line.toString().trim();
  log(`provider stub at ${stubUrl}`);
  if (hidden.length > 0) {
    log(`left off PATH, since they hold a tether: ${hidden.join(', ')}`);
  }
  prepare(stubUrl);

  const csEnv = childEnv({ PATH: `${node24}${path.delimiter}${searchPath}` });
  const nodeBin = path.join(node24, 'node');
  const common = ['--user-data-dir', dirs.data, '--extensions-dir', dirs.ext, '--config', path.join(state, 'config.yaml')];
  execFileSync(nodeBin, [codeServer, ...common, '--install-extension', vsix], { env: csEnv, stdio: 'pipe' });
  log('extension installed from tether.vsix');

  const port = await freePort();
  start('code-server', nodeBin, [
    codeServer,
    ...common,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-workspace-trust',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    dirs.ws,
  ], { env: csEnv });
  const base = `http://127.0.0.1:${port}`;
  await until('code-server', async () => (await fetch(`${base}/healthz`)).ok);
  log(`code-server on ${base}`);

  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: process.env.E2E_HEADFUL ? false : true,
    userDataDir: dirs.chromium,
    env: childEnv(),
    defaultViewport: { width: 1440, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  let passed = 0;
  let failed = 0;
  const page = await browser.newPage();
  try {
    await page.goto(`${base}/?folder=${encodeURIComponent(dirs.ws)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60_000 });
    await until('the tether status bar item', async () => (await statusBar(page)).includes('tether: idle'), 60_000);
    log('VS Code is up; the status bar says tether: idle');
    const frame = await openChat(page);
    log('the chat view is open');

    const expected = execFileSync(python, ['-c', 'import sys; sys.path.insert(0, sys.argv[1]); import stub; print(stub.ANSWER)', here], {
      encoding: 'utf8',
    }).trim();
    const scenarios = [
      ["the server is the workspace's .venv/bin/tether", () => foundInVenv(page)],
      ['ask in the chat view: a streamed answer, with the key from secret storage', async () => {
        await setApiKey(page);
        await streamedAnswer(page, frame, expected);
        await keyReachedProvider();
      }],
      ["the status bar shows the context used and the session's tokens", () => usageInStatusBar(page)],
      ['a patch approved from its card lands in the editor; Ctrl+Z undoes it', () => patchFromCard(page, frame)],
      ['a command approved from the notification dialog', () => commandFromDialog(page, frame)],
      ['a dismissed dialog parks the call; its card allows it', () => parkedThenCard(page, frame)],
      ['a command denied with tether: Deny Pending Calls', () => denyFromPalette(page, frame)],
      ['the session picker reopens a session from its history', () => reopenFromPicker(page, frame)],
      ['[patch a.py, command importing a]: the command sees the patch (saved)', () => patchThenCommand(page, frame)],
      ['Rewind on that turn takes the patch back (a.py X = 1, saved), shown in the chat', () => rewindFromChat(page, frame)],
      ['b.py unsaved before the patch: the dialog and the result name it', () => dirtyThenCommand(page, frame)],
      ["a command's output shows live, folded after", () => liveOutput(page, frame)],
      ['the answer is rendered as Markdown, safely', () => markdownAnswer(page, frame)],
      ['Ctrl+K A asks and Ctrl+K X stops', () => keybindings(page, frame)],
    ];
    for (const [name, scenario] of scenarios) {
      log(`scenario: ${name}`);
      try {
        await scenario();
        passed += 1;
        log(`ok: ${name}`);
      } catch (error) {
        failed += 1;
        log(`FAILED: ${name}: ${error.stack ?? error}`);
        log(`active tab: ${await activeTab(page).catch((e) => e.message)}; status bar: ${await statusBar(page).catch((e) => e.message)}`);
        await shot(page, `failure-${passed + failed}`).catch(() => undefined);
        break; // the stub's replies are scripted in order: the rest cannot run
      }
    }
    failed += scenarios.length - passed - failed;
  } finally {
    await browser.close().catch(() => undefined);
    stub.stdin.end();
    await Promise.race([once(stub, 'exit'), new Promise((resolve) => setTimeout(resolve, 3000))]);
    stopAll();
    if (state !== inClone) {
      fs.rmSync(state, { recursive: true, force: true });
    }
  }
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

main().catch((error) => {
  console.error(error);
  stopAll();
  console.log('e2e: 0 passed, 14 failed');
  process.exitCode = 1;
});
