import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { ChatController } from '../src/view/controller';
import { parseFromView, parseUpdate, type History, type Rewound } from '../src/view/protocol';
import { describeRewound, turnChoices, whatsFor } from '../src/view/rewind';
import { Transcript } from '../src/view/transcript';
import { FakeBackend, Posted, like, settle } from './fakes';

const S = 'sess-1';
const STATS: History['stats'] = {
  tool_calls: 0,
  tool_time_s: 0,
  tool_time_sum_s: 0,
  commands_sandboxed: 0,
  commands_unsandboxed: 0,
  requests: 0,
  input_tokens: 0,
  output_tokens: 0,
  turns: [],
};

/** Two turns: the first patched a.txt, the second only read; the first was rewound once. */
function twoTurns(rewinds: History['rewinds'] = []): History {
  return {
    messages: [
      { role: 'user', content: 'fix a.txt', turn: 1 },
      { role: 'assistant', content: 'fixed', turn: 1 },
      { role: 'user', content: 'what changed?', turn: 2 },
      { role: 'assistant', content: 'a.txt', turn: 2 },
    ],
    pending: [],
    stats: STATS,
    compactions: [],
    checkpoints: [{ turn: 1, files: ['a.txt'], created: '2026-11-01T10:00:00Z' }],
    rewinds,
  };
}

function rewound(fields: Partial<Rewound> = {}): Rewound {
  return { session: S, turn: 1, what: 'files', restored: [], removed: [], conflicts: [], notes: [], ...fields };
}

describe('rewind, apart from VS Code', () => {
  it('lists every turn newest first, with its prompt and the files it changed', () => {
    assert.deepEqual(turnChoices(twoTurns()), [
      { turn: 2, prompt: 'what changed?', files: [] },
      { turn: 1, prompt: 'fix a.txt', files: ['a.txt'] },
    ]);
    assert.deepEqual(whatsFor(['a.txt']), ['files', 'conversation', 'both']);
    assert.deepEqual(whatsFor([]), ['conversation'], 'a turn that changed no file has only its conversation');
  });

  it("says what a rewind restored and removed, its notes, and apart, what it left and why", () => {
    const done = describeRewound(
      rewound({ restored: ['a.py', 'b.txt'], removed: ['c.txt'], notes: ['not a git repository: commands are not undone'] }),
    );
    assert.equal(
      done.text,
      'Rewound turn 1 (files): restored a.py, b.txt; removed c.txt. not a git repository: commands are not undone.',
    );
    assert.equal(done.warning, undefined);
    const left = describeRewound(rewound({ conflicts: [{ path: 'a.py', reason: 'edited since, in the same lines' }] }));
    assert.equal(left.text, 'Rewound turn 1 (files): no file changed.');
    assert.match(left.warning ?? '', /a\.py: edited since, in the same lines/);
    const talk = describeRewound(rewound({ turn: 3, what: 'conversation' }));
    assert.equal(talk.text, 'Rewound turn 3 (conversation): the model is no longer sent turn 3 and what followed.');
  });

  it("takes the webview's rewind only with a turn, and a rewind update only with its lists", () => {
    assert.deepEqual(parseFromView({ type: 'rewind', turn: 2 }), { type: 'rewind', turn: 2 });
    for (const turn of [0, 1.5, '2', undefined]) {
      assert.equal(parseFromView({ type: 'rewind', turn }), undefined);
    }
    const update = { kind: 'rewind', session: S, turn: 1, what: 'files', restored: [], removed: [], conflicts: [], notes: [] };
    assert.ok(parseUpdate(update));
    assert.equal(parseUpdate({ ...update, restored: undefined }), undefined);
  });

  it('rebuilds a session with its turns numbered, Rewind on those that changed files, and its rewinds in place', () => {
    const history = twoTurns([{ ...rewound({ restored: ['a.txt'] }), before: 2, created: '2026-11-01T10:01:00Z' }]);
    const t = Transcript.fromHistory(S, history);
    like(t.entries, [
      { kind: 'user', text: 'fix a.txt', turn: 1, files: ['a.txt'] },
      { kind: 'assistant', text: 'fixed' },
      { kind: 'notice', tone: 'info', text: 'Rewound turn 1 (files): restored a.txt.' },
      { kind: 'user', text: 'what changed?', turn: 2 },
      { kind: 'assistant', text: 'a.txt' },
    ]);
    assert.equal((t.entries[3] as { files?: string[] }).files, undefined);
  });
});

describe('rewind in the chat', () => {
  let backend: FakeBackend;
  let posted: Posted;
  let chat: ChatController;

  beforeEach(() => {
    backend = new FakeBackend();
    posted = new Posted();
    chat = new ChatController(backend, posted.post, () => 0);
  });

  it("offers Rewind on a prompt once its turn's end shows it changed files", async () => {
    const asked = chat.receive({ type: 'ask', prompt: 'fix a.txt' });
    backend.runResult.resolve({ session: S, status: 'running' });
    await asked;
    const history = twoTurns();
    history.messages = history.messages.slice(0, 2);
    backend.histories.set(S, history);
    chat.update({ kind: 'status', session: S, status: 'done', detail: null, result: { session: S, status: 'done' } });
    await settle();

    like([...posted.entries().values()][0], { kind: 'user', text: 'fix a.txt', turn: 1, files: ['a.txt'] });
  });

  it('asks what to take back, rewinds, reports, and shows the rewind from its update', async () => {
    backend.histories.set(S, twoTurns());
    await chat.receive({ type: 'open', session: S });
    backend.rewindWhat = 'both';
    const result = rewound({ what: 'both', restored: ['a.txt'] });
    backend.rewindResult = Promise.resolve(result);

    await chat.receive({ type: 'rewind', turn: 1 });
    chat.update({ kind: 'rewind', ...result });

    const calls = backend.calls.filter((c) => c[0] === 'chooseRewind' || c[0] === 'rewind');
    assert.deepEqual(calls, [
      ['chooseRewind', 1, ['a.txt']],
      ['rewind', S, 1, 'both'],
    ]);
    assert.deepEqual(backend.reported, [result]);
    const texts = [...posted.entries().values()].map((e) => (e as { text?: string }).text);
    assert.ok(texts.includes('Rewound turn 1 (both): restored a.txt; the model is no longer sent turn 1 and what followed.'));
  });

  it('does nothing when the person picks nothing, and says why the server refused', async () => {
    backend.histories.set(S, twoTurns());
    await chat.receive({ type: 'open', session: S });
    backend.rewindWhat = undefined;
    await chat.rewind(1);
    assert.equal(backend.calls.filter((c) => c[0] === 'rewind').length, 0);

    backend.rewindWhat = 'files';
    backend.rewindResult = Promise.reject(new Error('a turn is running on session sess-1'));
    await chat.rewind(1);
    const last = [...posted.entries().values()].at(-1);
    like(last, { kind: 'notice', tone: 'error', text: 'Rewind failed: a turn is running on session sess-1' });
    assert.deepEqual(backend.reported, []);
  });
});
