// End to end in a real VS Code: code-server with the extension installed from its
// vsix, driven in Debian's chromium by puppeteer-core, against `tether serve` and the
// loopback provider stub (stub.py). Three scenarios, a screenshot of each in
// test-output/:
//   1. ask in the chat view: the answer streams in;
//   2. a patch approved from its card lands in the editor, and Ctrl+Z undoes it;
//   3. a command approved from the notification dialog runs.
//
// Three more check parking, the commands and the session picker:
//   4. a command whose dialog is dismissed parks; its card then allows it (tether.approve);
//   5. a command denied with "tether: Deny Pending Calls" from the command palette;
//   6. the session picker reopens the session from tether.history.
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
};

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
  const pythonPath = execFileSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  const settings = {
    'tether.serverCommand': [pythonPath, '-m', 'tether', 'serve'],
    'tether.env': {
      TETHER_BASE_URL: stubUrl,
      TETHER_MODEL: 'stub-model',
      TETHER_API_KEY: 'sk-e2e-not-a-secret',
      TETHER_HOME: dirs.tether,
      PYTHONUNBUFFERED: '1',
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

/** Open the chat view; on a cold first start the webview can miss the first command. */
async function openChat(page) {
  await runCommand(page, 'tether: Open Chat');
  try {
    return await chatFrame(page);
  } catch {
    log('the chat view did not open yet: running tether: Open Chat again');
    await runCommand(page, 'tether: Open Chat');
    return chatFrame(page, 90_000);
  }
}

async function runCommand(page, title) {
  await page.keyboard.press('F1');
  const input = await page.waitForSelector('.quick-input-widget input', { visible: true });
  await input.type(title);
  await until(`the command "${title}" in the palette`, () =>
    page.$$eval('.quick-input-list .monaco-list-row', (rows, wanted) => rows.some((r) => r.textContent.includes(wanted)), title),
  );
  await page.keyboard.press('Enter');
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
  return frame.$$eval('.entry.assistant', (all) => (all.length ? all[all.length - 1].textContent : ''));
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
      if (last && seen[seen.length - 1] !== last.textContent) {
        seen.push(last.textContent);
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
  const onDisk = fs.readFileSync(path.join(dirs.ws, 'app.py'), 'utf8');
  if (!onDisk.includes('x = 1')) {
    throw new Error('the patch was written to disk instead of being applied in the editor');
  }
  log('the patch landed in the editor buffer (the file on disk is unchanged)');
  await shot(page, '2b-patch-applied');

  await page.click('.editor-group-container.active .monaco-editor .view-lines');
  await page.keyboard.down('Control');
  await page.keyboard.press('z');
  await page.keyboard.up('Control');
  await until('Ctrl+Z to undo the patch', async () => {
    const text = await editorText(page);
    return text.includes('x = 1') && !text.includes('x = 2');
  });
  log('Ctrl+Z undid it');
  await shot(page, '2c-patch-undone');
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
  prepare(stubUrl);

  const csEnv = childEnv({ PATH: `${node24}${path.delimiter}${process.env.PATH}` });
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
      ['ask in the chat view: a streamed answer', () => streamedAnswer(page, frame, expected)],
      ['a patch approved from its card lands in the editor; Ctrl+Z undoes it', () => patchFromCard(page, frame)],
      ['a command approved from the notification dialog', () => commandFromDialog(page, frame)],
      ['a dismissed dialog parks the call; its card allows it', () => parkedThenCard(page, frame)],
      ['a command denied with tether: Deny Pending Calls', () => denyFromPalette(page, frame)],
      ['the session picker reopens a session from its history', () => reopenFromPicker(page, frame)],
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
  console.log('e2e: 0 passed, 6 failed');
  process.exitCode = 1;
});
