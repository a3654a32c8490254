import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ActivityTracker } from '../src/view/activity';
import { DialogBook, dialogCall, offeredAnswers, unsavedNote, type ActionItem } from '../src/view/dialogs';
import { doctorCommand, needsAttention, summarizeDoctor } from '../src/view/doctor';
import { editedDocuments, editedVersions, saveAfterAction, saveAfterEdit } from '../src/view/edits';
import { INSTALL_ADVICE, locateServer, type LaunchInput } from '../src/view/launch';
import { allowedAttribute, renderMarkdown } from '../src/view/markdown';
import { parseOutcome, parseUpdate } from '../src/view/protocol';
import { droppedKeys, serverLayer } from '../src/view/settings';
import { keepTail } from '../src/view/transcript';
import { UsageBook, compact, describeUsage } from '../src/view/usage';

const actions = (callId: string, always = true): ActionItem[] => [
  { title: 'Allow', call_id: callId },
  ...(always ? [{ title: 'Allow always', call_id: callId }] : []),
  { title: 'Deny', call_id: callId },
];

describe('the dialog book', () => {
  it('pairs a dialog with its call by the call_id its items carry, and answers with its own item', () => {
    const book = new DialogBook();
    book.announce({ session: 's', callId: 'c1', tool: 'command', summary: 'make test' });
    book.announce({ session: 's', callId: 'c2', tool: 'patch', summary: 'app.py (1 edit)' });
    // The wording says nothing the pairing relies on.
    const items = actions('c2');
    assert.equal(dialogCall(items), 'c2');
    const answers: ActionItem[] = [];
    book.opened('c2', items, (item) => answers.push(item));
    assert.deepEqual(book.openCalls().map((c) => c.callId), ['c2']);
    assert.equal(book.answer('c1', 'Allow'), false, 'c1 has no dialog open');
    assert.equal(book.answer('c2', 'Allow always'), true);
    assert.equal(book.answer('c2', 'Deny'), false, 'a dialog is answered once');
    assert.deepEqual(answers, [{ title: 'Allow always', call_id: 'c2' }]);
  });

  it('refuses an answer the dialog does not offer, rather than give another', () => {
    const book = new DialogBook();
    book.announce({ session: 's', callId: 'c3', tool: 'command', summary: 'a very long command' });
    const answered: string[] = [];
    book.opened('c3', actions('c3', false), (item) => answered.push(item.title));
    assert.throws(() => book.answer('c3', 'Allow always'), /does not offer "Allow always"/);
    assert.equal(book.isOpen('c3'), true);
    assert.deepEqual(answered, []);
  });

  it('reads what a dialog offers and what it warns of', () => {
    assert.equal(dialogCall([{ title: 'Extend' }, { title: 'Stop' }]), undefined, 'not an approval');
    assert.deepEqual(offeredAnswers(actions('c', false)), ['allow', 'deny']);
    assert.deepEqual(offeredAnswers(actions('c')), ['allow', 'always', 'deny']);
    const message = [
      'tether wants to run command: python -m pytest',
      '',
      'Unsaved in the editor (the command sees the files on disk): b.py, src/c.py',
      '',
      'Allow always remembers: python -m pytest with any arguments',
    ].join('\n');
    assert.equal(unsavedNote(message), 'Unsaved in the editor (the command sees the files on disk): b.py, src/c.py');
    assert.equal(unsavedNote('Unsaved in the editor:\n  - b.py\n  - c.py\n\nmore'), 'Unsaved in the editor:\n  - b.py\n  - c.py');
    assert.equal(unsavedNote('tether wants to run command: ls'), undefined);
  });
});

describe('activity across sessions', () => {
  it('is awaiting while a call waits, running while a turn runs, idle after', () => {
    const activity = new ActivityTracker();
    assert.equal(activity.state, 'idle');
    activity.apply({ kind: 'status', session: 'a', status: 'running', detail: null, result: null });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'pending' });
    assert.equal(activity.state, 'awaiting');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'allowed' });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'status', session: 'a', status: 'awaiting_approval', detail: null, result: null });
    assert.equal(activity.state, 'awaiting');
    assert.deepEqual(activity.awaitingSessions(), ['a']);
    activity.apply({ kind: 'status', session: 'a', status: 'running', detail: null, result: null });
    activity.apply({ kind: 'status', session: 'a', status: 'done', detail: null, result: { session: 'a', status: 'done' } });
    assert.equal(activity.state, 'idle');
  });
});

describe('tether/update params and command answers', () => {
  it('are taken only when they have the fields their kind needs', () => {
    assert.ok(parseUpdate({ kind: 'text', session: 's', text: 'hi' }));
    assert.ok(parseUpdate({ kind: 'status', session: 's', status: 'done', detail: null }));
    assert.ok(parseUpdate({ kind: 'status', session: 's', status: 'done', result: { session: 's', status: 'done' } }));
    assert.ok(parseUpdate({ kind: 'output', session: 's', call_id: 'c', text: 'line\n' }));
    assert.ok(parseUpdate({ kind: 'usage', session: 's', input_tokens: 10, output_tokens: 2, context_tokens: 10, context_window: 100 }));
    assert.equal(parseUpdate({ kind: 'status', session: 's', status: 'done', result: { answer: 'no session' } }), undefined);
    assert.equal(parseUpdate({ kind: 'output', session: 's', text: 'no call' }), undefined);
    assert.equal(parseUpdate({ kind: 'usage', session: 's', input_tokens: '10' }), undefined);
    assert.equal(parseUpdate({ kind: 'text', session: 's' }), undefined);
    assert.equal(parseUpdate({ kind: 'tool_result', session: 's', tool: 'x' }), undefined);
    assert.equal(parseUpdate({ kind: 'weird', session: 's' }), undefined);
    assert.equal(parseUpdate({ kind: 'toString', session: 's' }), undefined);
    assert.equal(parseUpdate([]), undefined);
  });

  it('tell Started from a result, and refuse anything else', () => {
    assert.deepEqual(parseOutcome({ session: 's', status: 'running' }), { session: 's', status: 'running' });
    assert.equal(parseOutcome({ session: 's', status: 'error', error: 'no model' }).status, 'error');
    assert.throws(() => parseOutcome(null), /no session and status/);
    assert.throws(() => parseOutcome({ status: 'running' }), /no session and status/);
  });

  it('keep the tail of long output, from a line start', () => {
    assert.equal(keepTail('short', 10), 'short');
    assert.equal(keepTail('line one\nline two\nline three\n', 20), 'line three\n');
  });
});

describe('usage', () => {
  it("adds each request's tokens to what the history said, and shows the window's fill", () => {
    const book = new UsageBook();
    book.seed('s', { input_tokens: 1000, output_tokens: 200, requests: 2 });
    book.apply({ kind: 'usage', session: 's', input_tokens: 12_000, output_tokens: 345, context_tokens: 12_345, context_window: 128_000 });
    const usage = book.get('s');
    assert.deepEqual(usage, { inputTokens: 13_000, outputTokens: 545, requests: 3, contextTokens: 12_345, contextWindow: 128_000 });
    assert.ok(usage);
    const words = describeUsage(usage);
    assert.equal(words.text, 'ctx 12k/128k (10%) · 14k tok');
    assert.match(words.tooltip, /Context: 12,345 of the model's 128,000 tokens \(10%\)/);
    assert.match(words.tooltip, /This session: 13,000 in \+ 545 out = 13,545 tokens in 3 requests/);
  });

  it('shows the last session that reported when the given one has none, and no window it was not told', () => {
    const book = new UsageBook();
    book.apply({ kind: 'usage', session: 'b', input_tokens: 900, output_tokens: 40, context_tokens: 900, context_window: null });
    assert.equal(book.shown(null), book.get('b'));
    const usage = book.shown('unknown');
    assert.ok(usage);
    assert.equal(describeUsage(usage).text, 'ctx 900 · 940 tok');
    assert.deepEqual([compact(999), compact(1234), compact(128_000), compact(1_500_000)], ['999', '1.2k', '128k', '1.5M']);
  });
});

describe('the server settings', () => {
  it("map the typed settings to the server's keys, and send only what was set", () => {
    const set: Record<string, unknown> = {
      'provider.kind': 'anthropic',
      'provider.model': ' claude-sonnet ',
      'provider.baseUrl': '',
      'turn.toolBudget': 20,
      'turn.repeatLimit': 1, // below the minimum: the server would refuse it
      'approval.dialogs': false,
    };
    assert.deepEqual(serverLayer((key) => set[key], 'sk-secret'), {
      provider: { kind: 'anthropic', model: 'claude-sonnet', api_key: 'sk-secret' },
      turn: { tool_budget: 20 },
      approval: { dialogs: false },
    });
    assert.deepEqual(serverLayer(() => undefined), {});
    assert.deepEqual(serverLayer((key) => (key === 'provider.kind' ? '' : undefined), ''), {});
  });

  it('name the keys given at start that are unset now', () => {
    const before = { provider: { model: 'm', api_key: 'k' }, turn: { tool_budget: 9 } };
    assert.deepEqual(droppedKeys(before, { provider: { model: 'n', api_key: 'k' }, turn: { tool_budget: 9 } }), []);
    assert.deepEqual(droppedKeys(before, { provider: { model: 'm' } }), ['provider.api_key', 'turn.tool_budget']);
  });
});

describe('finding tether serve', () => {
  const input = (over: Partial<LaunchInput>, files: string[] = []): LaunchInput => ({
    explicit: undefined,
    pathEnv: '/usr/local/bin:/home/me/.local/bin',
    folders: ['/ws'],
    platform: 'linux',
    trusted: true,
    isExecutable: (file) => files.includes(file),
    ...over,
  });

  it('takes tether from PATH, else the workspace .venv', () => {
    const both = ['/home/me/.local/bin/tether', '/ws/.venv/bin/tether'];
    assert.deepEqual(locateServer(input({}, both)), { found: true, command: '/home/me/.local/bin/tether', args: ['serve'], how: 'path' });
    assert.deepEqual(locateServer(input({}, ['/ws/.venv/bin/tether'])), { found: true, command: '/ws/.venv/bin/tether', args: ['serve'], how: 'venv' });
    assert.deepEqual(
      locateServer(input({ platform: 'win32', pathEnv: 'C:\\bin', folders: ['C:\\ws'] }, ['C:\\ws\\.venv\\Scripts\\tether.exe'])),
      { found: true, command: 'C:\\ws\\.venv\\Scripts\\tether.exe', args: ['serve'], how: 'venv' },
    );
    assert.deepEqual(
      locateServer(input({ platform: 'win32', pathEnv: 'C:\\bin;C:\\tools', pathExt: '.EXE;.CMD' }, ['C:\\tools\\tether.cmd'])),
      { found: true, command: 'C:\\tools\\tether.cmd', args: ['serve'], how: 'path' },
    );
  });

  it("takes the person's own program as they set it, and keeps their arguments for a bare tether", () => {
    const own = ['/opt/py/bin/python', '-m', 'tether', 'serve'];
    assert.deepEqual(locateServer(input({ explicit: own }, ['/home/me/.local/bin/tether'])), {
      found: true, command: '/opt/py/bin/python', args: ['-m', 'tether', 'serve'], how: 'setting',
    });
    assert.deepEqual(locateServer(input({ explicit: ['tether', 'serve', '--verbose'] }, ['/ws/.venv/bin/tether'])), {
      found: true, command: '/ws/.venv/bin/tether', args: ['serve', '--verbose'], how: 'venv',
    });
  });

  it('runs no .venv of an untrusted workspace, and says what to install when nothing is found', () => {
    const untrusted = locateServer(input({ trusted: false }, ['/ws/.venv/bin/tether']));
    assert.equal(untrusted.found, false);
    const missing = locateServer(input({}));
    assert.ok(!missing.found);
    {
      assert.match(missing.message, /not found on PATH or in the workspace's \.venv/);
      for (const words of ['pipx install /path/to/tether', 'uv tool install /path/to/tether', 'tether-lsp', 'tether.serverCommand']) {
        assert.ok(missing.message.includes(words), `the advice names ${words}`);
      }
      assert.ok(missing.message.endsWith(INSTALL_ADVICE));
    }
  });
});

describe('tether doctor', () => {
  const report = (sandbox: string, extra: string[] = []): string =>
    [
      'tether 0.1.0 (Python 3.11.7), workspace /ws',
      'settings: ok',
      'provider: openai at its default, model m',
      'state: /home/me/.local/state/tether',
      'git: /usr/bin/git',
      'rg: /usr/bin/rg',
      'bwrap: /usr/bin/bwrap',
      sandbox,
      'commands: approval.commands = ask',
      ...extra,
    ].join('\n') + '\n';
  const restricted =
    'sandbox: NOT USED (sandbox.mode = auto): user namespaces are restricted on this system ' +
    '(...); bubblewrap said: bwrap: setting up uid map: Permission denied';

  it("runs the server's program with doctor in place of serve and what follows it", () => {
    assert.deepEqual(doctorCommand({ command: '/ws/.venv/bin/tether', args: ['serve'] }, '/ws'), {
      command: '/ws/.venv/bin/tether', args: ['doctor', '--workspace', '/ws'],
    });
    assert.deepEqual(doctorCommand({ command: '/opt/py/bin/python', args: ['-m', 'tether', 'serve', '--verbose'] }, '/ws'), {
      command: '/opt/py/bin/python', args: ['-m', 'tether', 'doctor', '--workspace', '/ws'],
    });
    assert.deepEqual(doctorCommand({ command: 'tether', args: ['serve'] }, undefined), { command: 'tether', args: ['doctor'] });
  });

  it('is information when all is well, with the sandbox line', () => {
    const summary = summarizeDoctor({ code: 0, stdout: report('sandbox: on (sandbox.mode = auto); its probe holds'), stderr: '' });
    assert.equal(summary.level, 'info');
    assert.match(summary.message, /sandbox: on \(sandbox\.mode = auto\); its probe holds/);
    assert.equal(summary.lines.length, 9);
  });

  it('warns with the sandbox line and its cause when commands would run unsandboxed', () => {
    const summary = summarizeDoctor({ code: 1, stdout: report(restricted), stderr: '' });
    assert.equal(summary.level, 'warning');
    assert.equal(summary.message, `tether doctor: ${restricted}`);
  });

  it('names every line that needs the person, the sandbox line first', () => {
    const stdout = report('sandbox: on (sandbox.mode = auto); its probe holds')
      .replace('settings: ok', 'settings: unknown setting `turn.budget` in the editor; it is ignored')
      .replace('model m', 'model none: set TETHER_MODEL');
    const summary = summarizeDoctor({ code: 1, stdout, stderr: '' });
    assert.equal(summary.level, 'warning');
    assert.equal(
      summary.message,
      'tether doctor: sandbox: on (sandbox.mode = auto); its probe holds · ' +
        'settings: unknown setting `turn.budget` in the editor; it is ignored · ' +
        'provider: openai at its default, model none: set TETHER_MODEL',
    );
    assert.equal(needsAttention('sandbox: NOT USED (sandbox.mode = off): the sandbox is off (sandbox.mode = off)'), false);
    assert.equal(needsAttention(restricted), true);
    assert.equal(needsAttention('bwrap: not found'), false);
    // MCP servers, started for a moment by the doctor: one that failed or never answered needs you.
    assert.equal(needsAttention('mcp server docs (settings): http://h/mcp: FAILED: it could not start'), true);
    assert.equal(needsAttention('mcp server db (settings): db-server: NO ANSWER within 10 s (starting)'), true);
    assert.equal(needsAttention('mcp server git (settings): uvx mcp-server-git: running, 12 tools'), false);
  });

  it('is an error with the reason when the doctor cannot run', () => {
    const older = summarizeDoctor({ code: 2, stdout: '', stderr: "usage: tether ...\ntether: error: argument command: invalid choice: 'doctor'\n" });
    assert.equal(older.level, 'error');
    assert.equal(older.message, "tether doctor could not run: tether: error: argument command: invalid choice: 'doctor'");
    const missing = summarizeDoctor({ code: null, stdout: '', stderr: '', failure: 'tether could not start: spawn tether ENOENT' });
    assert.deepEqual([missing.level, missing.message], ['error', 'tether doctor could not run: tether could not start: spawn tether ENOENT']);
    const silent = summarizeDoctor({ code: 1, stdout: 'something else\n', stderr: '' });
    assert.deepEqual([silent.level, silent.message], ['error', 'tether doctor could not run: it exited 1 with something else']);
  });
});

describe("tether's edits", () => {
  it('names the documents an edit changes, with the versions it was made against', () => {
    const edit = {
      documentChanges: [
        { textDocument: { uri: 'file:///ws/a.py', version: 3 }, edits: [] },
        { kind: 'create' as const, uri: 'file:///ws/new.py' },
        { textDocument: { uri: 'file:///ws/a.py', version: 3 }, edits: [] },
      ],
      changes: { 'file:///ws/b.py': [] },
    };
    assert.deepEqual(editedDocuments(edit), ['file:///ws/a.py', 'file:///ws/new.py', 'file:///ws/b.py']);
    assert.deepEqual([...editedVersions(edit)], [['file:///ws/a.py', 3]]);
  });

  it('saves a file that had no unsaved changes before, never one that had, nor an untitled buffer', () => {
    assert.equal(saveAfterEdit({ dirty: false, scheme: 'file' }, 'file'), true);
    assert.equal(saveAfterEdit(undefined, 'file'), true, 'a document the edit opened had none');
    assert.equal(saveAfterEdit({ dirty: true, scheme: 'file' }, 'file'), false);
    assert.equal(saveAfterEdit({ dirty: false, scheme: 'untitled' }, 'untitled'), false);
  });

  it('saves after the Apply patch action only what its own edit changed in a saved document', () => {
    assert.equal(saveAfterAction({ version: 4, dirty: false }, { version: 5, dirty: true }), true);
    assert.equal(saveAfterAction({ version: 4, dirty: true }, { version: 5, dirty: true }), false, 'it had unsaved changes');
    assert.equal(saveAfterAction({ version: 4, dirty: false }, { version: 7, dirty: true }), false, 'more changed since');
    assert.equal(saveAfterAction({ version: 4, dirty: false }, { version: 4, dirty: false }), false, 'not applied');
  });
});

describe('markdown in the chat', () => {
  it('renders code blocks and emphasis', () => {
    const html = renderMarkdown('Run **this**:\n\n```python\nprint(1 < 2)\n```\n');
    assert.match(html, /<strong>this<\/strong>/);
    assert.match(html, /<pre><code class="language-python">print\(1 &lt; 2\)\n<\/code><\/pre>/);
  });

  it('shows raw HTML as text, fetches no image, and links only to http(s) and mailto', () => {
    const html = renderMarkdown(
      '<script>alert(1)</script> <img src=x onerror=alert(2)>\n\n' +
        '![pixel](https://evil.example/p.png) [run](javascript:alert(3)) [cmd](command:workbench.action.terminal.new) ' +
        '[docs](https://example.com/a)',
    );
    assert.ok(!/<script|<img|onerror=/i.test(html.replace(/&lt;[^&]*&gt;/g, '')), html);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.ok(!html.includes('href="javascript:'), html);
    assert.ok(!html.includes('href="command:'), html);
    assert.match(html, /<a href="https:\/\/example.com\/a">docs<\/a>/);
    assert.equal(allowedAttribute('a', 'href', 'javascript:alert(1)'), false);
    assert.equal(allowedAttribute('a', 'onclick', 'x'), false);
    assert.equal(allowedAttribute('code', 'class', 'language-ts'), true);
    assert.equal(allowedAttribute('code', 'class', 'x" onclick="y'), false);
    assert.equal(allowedAttribute('td', 'style', 'text-align:right'), false);
  });
});
