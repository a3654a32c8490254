import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { ChatController } from '../src/view/controller';
import type { TurnResult, Update } from '../src/view/protocol';
import { FakeBackend, Posted, deferred, like, settle } from './fakes';

const S = 'sess-1';

describe('the chat controller', () => {
  let backend: FakeBackend;
  let posted: Posted;
  let clock: number;
  let chat: ChatController;

  beforeEach(() => {
    backend = new FakeBackend();
    posted = new Posted();
    clock = 1_000;
    chat = new ChatController(backend, posted.post, () => clock);
  });

  /** Asks in a new session that the server starts (tether.run answers Started). */
  async function started(prompt: string): Promise<void> {
    const asked = chat.receive({ type: 'ask', prompt });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
  }

  /** The status update that ends the turn, with its result. */
  function ended(result: Omit<TurnResult, 'session'>): void {
    chat.update({ kind: 'status', session: S, status: result.status, detail: null, result: { session: S, ...result } });
  }

  it('learns a new session id from the answer to tether.run, and ends the turn from its status update', async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'hello there' });
    assert.deepEqual(backend.calls[0], ['run', 'hello there', undefined]);
    assert.equal(posted.lastStatus(), 'running');

    // Updates may come before the answer: another session's, and the new one's.
    chat.update({ kind: 'text', session: 'other', text: 'a scheduled task speaks first' });
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({ kind: 'text', session: S, text: 'Hel' });
    assert.equal(chat.session, null, 'no session is guessed from the first update');
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    assert.equal(chat.session, S);
    for (const text of ['lo ', 'back']) {
      chat.update({ kind: 'text', session: S, text });
    }
    assert.equal(posted.lastStatus(), 'running', 'Started is no end');

    chat.update({
      kind: 'status',
      session: S,
      status: 'done',
      detail: null,
      result: { session: S, status: 'done', answer: 'Hello back' },
    });
    const entries = [...posted.entries().values()];
    assert.deepEqual(entries, [
      { kind: 'user', id: 'u1', text: 'hello there' },
      { kind: 'assistant', id: 'a2', text: 'Hello back' },
    ]);
    assert.equal(posted.lastStatus(), 'done');
    await settle();
    assert.deepEqual(backend.calls.at(-1), ['sessions'], 'the picker learns the end');
  });

  it('draws the answer from the result when no text streamed, and a turn that ended before its answer stays ended', async () => {
    const first = chat.receive({ type: 'ask', prompt: 'one' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await first;
    ended({ status: 'done', answer: 'one is done' });
    backend.runResult = deferred();
    const second = chat.receive({ type: 'ask', prompt: 'two' });
    // The end comes first (the turn was quick), the answer to tether.run after it.
    chat.update({ kind: 'status', session: S, status: 'done', detail: null, result: { session: S, status: 'done', answer: 'two is done' } });
    backend.runResult.resolve({ session: S, status: 'running' });
    await second;
    assert.equal(posted.lastStatus(), 'done');
    const texts = [...posted.entries().values()].map((e) => (e as { text: string }).text);
    assert.deepEqual(texts, ['one', 'one is done', 'two', 'two is done']);
  });

  it('shows a turn that could not run from the result tether.run answered with', async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'hi' });
    backend.runResult.resolve({ session: S, status: 'error', error: 'provider.model is not set: set TETHER_MODEL' });
    await asked;
    assert.equal(chat.session, S);
    assert.equal(posted.lastStatus(), 'error');
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    like(notices, [{ tone: 'error', text: 'provider.model is not set: set TETHER_MODEL' }]);
  });

  it('says why when a turn cannot start, and is idle again', async () => {
    backend.runResult.reject(new Error('a turn is already running in session sess-1'));
    await chat.receive({ type: 'ask', prompt: 'again' });
    assert.equal(posted.lastStatus(), 'idle');
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    like(notices, [{ tone: 'error', text: 'tether.run failed: a turn is already running in session sess-1' }]);
  });

  it("streams a running command's output into its card and keeps it after the result", async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'run the tests' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    chat.update({ kind: 'tool_call', session: S, call_id: 'k1', tool: 'command', arguments: { command: 'pytest' }, summary: 'pytest' });
    chat.update({ kind: 'approval', session: S, call_id: 'k1', tool: 'command', summary: 'pytest', decision: 'allowed' });
    const before = posted.messages.length;
    chat.update({ kind: 'output', session: S, call_id: 'k1', text: 'collected 3 items\n' });
    chat.update({ kind: 'output', session: S, call_id: 'k1', text: '... 3 passed\n' });
    chat.update({ kind: 'output', session: 'other', call_id: 'k9', text: 'not this card' });
    assert.deepEqual(
      posted.messages.slice(before).map((m) => m.type),
      ['output', 'output'],
      'a known card gets the deltas alone, not redrawn',
    );
    assert.equal(posted.output('k1'), 'collected 3 items\n... 3 passed\n');
    chat.update({ kind: 'tool_result', session: S, call_id: 'k1', tool: 'command', status: 'ok', content: 'exit code: 0\n3 passed', started_at: null, ended_at: null });
    like(posted.entries().get('k1'), { state: 'ok', output: 'collected 3 items\n... 3 passed\n', result: 'exit code: 0\n3 passed' });
  });

  it('draws output that comes before its call once, in a card of its own', async () => {
    await started('run it');
    chat.update({ kind: 'output', session: S, call_id: 'k2', text: 'early\n' });
    chat.update({ kind: 'output', session: S, call_id: 'k2', text: 'later\n' });
    like(posted.entries().get('k2'), { kind: 'tool', state: 'running', output: 'early\n' });
    assert.equal(posted.output('k2'), 'later\n', 'the first text came with the card, not again as a delta');
  });

  it("offers on a card what the call's dialog offers, with its warning, until it is decided", async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'test it' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    chat.update({ kind: 'tool_call', session: S, call_id: 'k2', tool: 'command', arguments: { command: 'make test' }, summary: 'make test' });
    chat.update({ kind: 'approval', session: S, call_id: 'k2', tool: 'command', summary: 'make test', decision: 'pending' });
    chat.dialog('k2', ['allow', 'deny'], 'Unsaved in the editor: b.py');
    like(posted.entries().get('k2'), { approval: 'pending', offers: ['allow', 'deny'], note: 'Unsaved in the editor: b.py' });
    chat.update({ kind: 'approval', session: S, call_id: 'k2', tool: 'command', summary: 'make test', decision: 'allowed' });
    const entry = posted.entries().get('k2') as { offers?: unknown; note?: string };
    assert.equal(entry.offers, undefined);
    assert.equal(entry.note, 'Unsaved in the editor: b.py', 'the warning stays: the command ran without that text');
  });

  it('sends no second prompt while a turn runs, and leaves that turn running', async () => {
    await started('first');
    await chat.receive({ type: 'ask', prompt: 'second' });
    assert.equal(backend.calls.filter((c) => c[0] === 'run').length, 1);
    assert.equal(posted.lastStatus(), 'running');
    const texts = [...posted.entries().values()].map((e) => (e as { text: string }).text);
    assert.deepEqual(texts, ['first', 'A turn is running in this session: wait for it to end, or stop it, then ask again.']);
  });

  it('says so when the server stops in the middle of a turn', async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'long one' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    chat.serverLost();
    assert.equal(posted.lastStatus(), 'idle');
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    like(notices, [{ tone: 'error', text: 'The tether server stopped; the turn did not finish.' }]);
  });

  it('copies a code block through the backend', async () => {
    await chat.receive({ type: 'copy', text: 'print(1)\n' });
    assert.deepEqual(backend.calls, [['copy', 'print(1)\n']]);
  });

  it('asks the next prompt in the session it shows', async () => {
    const first = chat.receive({ type: 'ask', prompt: 'one' });
    backend.runResult.resolve({ session: S, status: 'done', answer: 'ok' });
    await first;
    backend.runResult = deferred();
    const second = chat.receive({ type: 'ask', prompt: 'two' });
    backend.runResult.resolve({ session: S, status: 'done', answer: 'ok again' });
    await second;
    assert.deepEqual(backend.calls.filter((c) => c[0] === 'run')[1], ['run', 'two', S]);
    const texts = [...posted.entries().values()].map((e) => (e as { text: string }).text);
    assert.deepEqual(texts, ['one', 'ok', 'two', 'ok again']);
  });

  it('ignores updates of other sessions', async () => {
    await chat.open(null);
    const asked = chat.receive({ type: 'ask', prompt: 'mine' });
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({ kind: 'text', session: 'other', text: 'not mine' });
    chat.update({ kind: 'text', session: S, text: 'mine too' });
    backend.runResult.resolve({ session: S, status: 'done', answer: 'mine too' });
    await asked;
    const texts = [...posted.entries().values()].map((e) => (e as { text: string }).text);
    assert.deepEqual(texts, ['mine', 'mine too']);
  });

  it('times each call and pairs results with calls by id, not by order', async () => {
    await started('read two files');
    const call = (id: string, path: string): Update => ({
      kind: 'tool_call',
      session: S,
      call_id: id,
      tool: 'fs-read',
      arguments: { path },
      summary: path,
    });
    chat.update(call('c1', 'a.txt'));
    chat.update(call('c2', 'b.txt'));
    clock = 1_120;
    chat.update({ kind: 'tool_result', session: S, call_id: 'c2', tool: 'fs-read', status: 'ok', content: 'B', started_at: null, ended_at: null });
    clock = 1_450;
    chat.update({ kind: 'tool_result', session: S, call_id: 'c1', tool: 'fs-read', status: 'error', content: 'no such file', started_at: null, ended_at: null });
    ended({ status: 'done', answer: 'read' });

    const entries = posted.entries();
    like(entries.get('c1'), { state: 'error', durationMs: 450, result: 'no such file', summary: 'a.txt' });
    like(entries.get('c2'), { state: 'ok', durationMs: 120, result: 'B' });
  });

  it('shows a waiting call as a card and sends the card answer to the backend', async () => {
    await started('patch it');
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({
      kind: 'tool_call',
      session: S,
      call_id: 'p1',
      tool: 'patch',
      arguments: { path: 'app.py', edits: [{ old: 'x = 1', new: 'x = 2' }] },
      summary: 'app.py (1 edit)',
    });
    chat.update({ kind: 'approval', session: S, call_id: 'p1', tool: 'patch', summary: 'app.py (1 edit)', decision: 'pending' });
    like(posted.entries().get('p1'), { approval: 'pending', state: 'waiting' });

    await chat.receive({ type: 'decide', callId: 'p1', answer: 'always' });
    assert.deepEqual(backend.calls.filter((c) => c[0] === 'decide'), [['decide', S, 'p1', 'always']]);
    like(posted.entries().get('p1'), { approval: 'deciding' });

    clock = 1_300;
    chat.update({ kind: 'approval', session: S, call_id: 'p1', tool: 'patch', summary: 'app.py (1 edit)', decision: 'allowed' });
    clock = 1_340;
    chat.update({ kind: 'tool_result', session: S, call_id: 'p1', tool: 'patch', status: 'ok', content: 'patched app.py', started_at: null, ended_at: null });
    like(posted.entries().get('p1'), { approval: 'allowed', state: 'ok', durationMs: 40 });

    await chat.receive({ type: 'decide', callId: 'p1', answer: 'deny' });
    assert.equal(backend.calls.filter((c) => c[0] === 'decide').length, 1, 'a decided call is not decided again');
    ended({ status: 'done', answer: '' });
    assert.equal(posted.lastStatus(), 'done');
  });

  it('gives a denied call no running time', async () => {
    await started('clean up');
    chat.update({ kind: 'tool_call', session: S, call_id: 'd1', tool: 'command', arguments: { command: 'rm -rf build' }, summary: 'rm -rf build' });
    chat.update({ kind: 'approval', session: S, call_id: 'd1', tool: 'command', summary: 'rm -rf build', decision: 'pending' });
    clock = 5_000;
    chat.update({ kind: 'approval', session: S, call_id: 'd1', tool: 'command', summary: 'rm -rf build', decision: 'denied' });
    chat.update({ kind: 'tool_result', session: S, call_id: 'd1', tool: 'command', status: 'denied', content: 'denied: the person denied it', started_at: null, ended_at: null });
    const entry = posted.entries().get('d1');
    like(entry, { state: 'denied', approval: 'denied' });
    assert.equal((entry as { durationMs?: number }).durationMs, undefined);
  });

  it('gives the buttons back and says why when a decision fails', async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'run it' });
    backend.runResult.resolve({
      session: S,
      status: 'awaiting_approval',
      pending: [{ call_id: 'k1', tool: 'command', arguments: { command: 'make' }, summary: 'make' }],
    });
    await asked;
    assert.equal(posted.lastStatus(), 'awaiting_approval');
    like(posted.entries().get('k1'), { approval: 'pending', summary: 'make' });

    backend.decideResult = Promise.reject(new Error("no pending call k1 in session 'sess-1'"));
    await chat.receive({ type: 'decide', callId: 'k1', answer: 'allow' });
    await settle();
    like(posted.entries().get('k1'), { approval: 'pending' });
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    like(notices, [{ tone: 'error', text: "tether.approve failed: no pending call k1 in session 'sess-1'" }]);
  });

  it('resumes a parked turn with tether.approve and ends it from the status update', async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'run it' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    const pending = [{ call_id: 'k1', tool: 'command', arguments: { command: 'make' }, summary: 'make' }];
    chat.update({ kind: 'status', session: S, status: 'awaiting_approval', detail: null, result: { session: S, status: 'awaiting_approval', pending } });
    assert.equal(posted.lastStatus(), 'awaiting_approval');
    like(posted.entries().get('k1'), { approval: 'pending', summary: 'make' });

    backend.decideResult = Promise.resolve({ session: S, status: 'running' });
    await chat.receive({ type: 'decide', callId: 'k1', answer: 'allow' });
    like(posted.entries().get('k1'), { approval: 'deciding' });
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({ kind: 'approval', session: S, call_id: 'k1', tool: 'command', summary: 'make', decision: 'allowed' });
    chat.update({ kind: 'status', session: S, status: 'done', detail: null, result: { session: S, status: 'done', answer: 'built it' } });
    assert.equal(posted.lastStatus(), 'done');
    await settle();
    assert.deepEqual(backend.calls.at(-1), ['sessions'], 'the picker learns the new status');
    const texts = [...posted.entries().values()].map((e) => (e as { text?: string }).text);
    assert.ok(texts.includes('built it'));
  });

  it('reopens an earlier session from its history, marking where it was compacted', async () => {
    backend.histories.set('old', {
      messages: [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'r1', name: 'fs-list', arguments: { path: 'src' } }] },
        {
          role: 'tool',
          content: 'a.py\nb.py',
          call_id: 'r1',
          tool: 'fs-list',
          status: 'ok',
          turn: 1,
          started_at: '2026-11-01T10:00:00.100Z',
          ended_at: '2026-11-01T10:00:00.350Z',
        },
        { role: 'assistant', content: 'two files' },
        { role: 'user', content: 'delete b.py' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'r2', name: 'command', arguments: '{"command": "rm b.py"}' }] },
      ],
      pending: [{ call_id: 'r2', tool: 'command', arguments: { command: 'rm b.py' }, summary: 'rm b.py' }],
      stats: {
        tool_calls: 1,
        tool_time_s: 0.25,
        tool_time_sum_s: 0.25,
        commands_sandboxed: 0,
        commands_unsandboxed: 0,
        requests: 3,
        input_tokens: 1200,
        output_tokens: 80,
        turns: [{ requests: 3, input_tokens: 1200, output_tokens: 80 }],
      },
      compactions: [{ before: 4, summary: 'The person listed src.', created: '2026-11-01T10:05:00.000Z' }],
      checkpoints: [],
      rewinds: [],
    });
    await chat.receive({ type: 'open', session: 'old' });

    const reset = posted.messages.find((m) => m.type === 'reset');
    assert.ok(reset?.type === 'reset');
    assert.equal(reset.session, 'old');
    assert.equal(reset.status, 'awaiting_approval');
    like(reset.entries, [
      { kind: 'user', text: 'list files' },
      { kind: 'tool', id: 'r1', tool: 'fs-list', summary: 'src', state: 'ok', durationMs: 250 },
      { kind: 'assistant', text: 'two files' },
      { kind: 'notice', tone: 'info', text: 'The context was compacted here: the model sees what is above as a summary.' },
      { kind: 'user', text: 'delete b.py' },
      { kind: 'tool', id: 'r2', tool: 'command', summary: 'rm b.py', approval: 'pending', arguments: { command: 'rm b.py' } },
    ]);
    assert.equal(chat.session, 'old');
  });

  it('drops malformed messages without calling the server', async () => {
    for (const raw of [
      null,
      'ask',
      { type: 'ask', prompt: '   ' },
      { type: 'ask', prompt: 42 },
      { type: 'decide', callId: 'x', answer: 'maybe' },
      { type: 'decide', answer: 'allow' },
      { type: 'open', session: 7 },
      { type: 'rm -rf' },
    ]) {
      await chat.receive(raw);
    }
    assert.deepEqual(backend.calls, []);
    assert.deepEqual(posted.messages, []);
  });

  it('answers ready with the whole transcript and the session list', async () => {
    backend.sessionList = [{ id: S, title: 'fix the build', status: 'done', updated: '2026-11-01T10:00:00Z' }];
    await chat.receive({ type: 'ready' });
    assert.deepEqual(posted.messages, [
      { type: 'reset', session: null, status: 'idle', entries: [] },
      { type: 'sessions', current: null, sessions: backend.sessionList },
    ]);
  });

  it('cancels the shown session on stop, and opens the diff of a patch card', async () => {
    await started('go');
    chat.update({ kind: 'tool_call', session: S, call_id: 'p9', tool: 'patch', arguments: { path: 'a', content: 'b' }, summary: 'a' });
    await chat.receive({ type: 'diff', callId: 'p9' });
    await chat.receive({ type: 'stop' });
    assert.deepEqual(backend.calls.slice(2), [['showDiff', 'p9'], ['cancel', S]]);
    ended({ status: 'cancelled' });
    assert.equal(posted.lastStatus(), 'cancelled');
  });

  it('says why a diff cannot be shown, and leaves the running turn alone', async () => {
    await started('patch it');
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({ kind: 'tool_call', session: S, call_id: 'p2', tool: 'patch', arguments: { path: 'a' }, summary: 'a' });
    backend.diffResult = Promise.reject(new Error("no pending call p2 in session 'sess-1'"));
    await chat.receive({ type: 'diff', callId: 'p2' });
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    like(notices, [{ tone: 'error', text: "Show diff failed: no pending call p2 in session 'sess-1'" }]);
    assert.equal(chat.status, 'running');
    ended({ status: 'done', answer: 'ok' });
  });

  it('shows a provider error once, from the status update or the result', async () => {
    await started('hi');
    chat.update({ kind: 'status', session: S, status: 'running', detail: null, result: null });
    chat.update({ kind: 'status', session: S, status: 'error', detail: 'provider: 401 invalid key', result: { session: S, status: 'error', error: 'provider: 401 invalid key' } });
    const notices = [...posted.entries().values()].filter((e) => (e as { kind: string }).kind === 'notice');
    assert.equal(notices.length, 1);
  });
});
