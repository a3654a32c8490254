import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ActivityTracker } from '../src/view/activity';
import { DialogBook } from '../src/view/dialogs';
import { patchArguments, proposedText } from '../src/view/patch';
import { parseUpdate } from '../src/view/protocol';

const ACTIONS = ['Allow', 'Allow always', 'Deny'];

describe('the dialog book', () => {
  it('pairs a dialog with the announced call it asks about, and answers it', () => {
    const book = new DialogBook();
    book.announce({ session: 's', callId: 'c1', tool: 'command', summary: 'make test' });
    book.announce({ session: 's', callId: 'c2', tool: 'patch', summary: 'app.py (1 edit)' });
    const call = book.match('tether wants to run patch: app.py (1 edit)\n\n--- a/app.py', ACTIONS);
    assert.equal(call?.callId, 'c2');

    const answers: string[] = [];
    book.opened('c2', (title) => answers.push(title));
    assert.deepEqual(book.openCalls().map((c) => c.callId), ['c2']);
    assert.equal(book.answer('c2', 'Allow always'), true);
    assert.equal(book.answer('c2', 'Deny'), false, 'a dialog is answered once');
    assert.deepEqual(answers, ['Allow always']);
  });

  it('leaves other dialogs alone', () => {
    const book = new DialogBook();
    book.announce({ session: 's', callId: 'c1', tool: 'command', summary: 'make' });
    assert.equal(book.match('tether: this turn has a budget of 64 tool calls', ['Extend', 'Stop']), undefined);
    assert.equal(book.match('tether wants to run command: make', ['Yes', 'No']), undefined);
    book.settle('c1');
    assert.equal(book.match('tether wants to run command: make', ACTIONS), undefined);
  });
});

describe('a patch proposed', () => {
  it('replaces each old text found once, against the text as it is now', () => {
    const args = patchArguments({ path: 'a.py', edits: [{ old: 'y = 2', new: 'y = 3' }, { old: 'x = 1', new: 'x = 10' }] });
    assert.ok(args);
    assert.deepEqual(proposedText('x = 1\ny = 2\n', args), { ok: true, text: 'x = 10\ny = 3\n' });
  });

  it('refuses what the server would refuse', () => {
    const missing = patchArguments({ path: 'a.py', edits: [{ old: 'nope', new: '' }] });
    const twice = patchArguments({ path: 'a.py', edits: [{ old: 'x', new: 'y' }] });
    const overlap = patchArguments({ path: 'a.py', edits: [{ old: 'ab', new: '' }, { old: 'bc', new: '' }] });
    assert.ok(missing && twice && overlap);
    assert.equal(proposedText('x = 1', missing).ok, false);
    assert.equal(proposedText('x x', twice).ok, false);
    assert.equal(proposedText('abc', overlap).ok, false);
    assert.equal(proposedText(undefined, missing).ok, false);
    assert.equal(patchArguments({ path: 'a.py', edits: [{ old: 1 }] }), undefined);
    assert.equal(patchArguments('{"path": "a.py"}'), undefined);
  });

  it('takes whole content, and matches LF edits in a CRLF file', () => {
    const content = patchArguments({ path: 'new.py', content: 'print(1)\n' });
    assert.ok(content);
    assert.deepEqual(proposedText(undefined, content), { ok: true, text: 'print(1)\n' });
    const crlf = patchArguments({ path: 'w.txt', edits: [{ old: 'a\nb', new: 'a\nB' }] });
    assert.ok(crlf);
    assert.deepEqual(proposedText('a\r\nb\r\n', crlf), { ok: true, text: 'a\r\nB\r\n' });
  });
});

describe('activity across sessions', () => {
  it('is awaiting while a call waits, running while a turn runs, idle after', () => {
    const activity = new ActivityTracker();
    assert.equal(activity.state, 'idle');
    activity.apply({ kind: 'status', session: 'a', status: 'running' });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'pending' });
    assert.equal(activity.state, 'awaiting');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'allowed' });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'status', session: 'a', status: 'awaiting_approval' });
    assert.equal(activity.state, 'awaiting');
    assert.deepEqual(activity.awaitingSessions(), ['a']);
    activity.apply({ kind: 'status', session: 'a', status: 'running' });
    activity.apply({ kind: 'status', session: 'a', status: 'done' });
    assert.equal(activity.state, 'idle');
  });
});

describe('tether/update params', () => {
  it('are taken only when they have the fields their kind needs', () => {
    assert.ok(parseUpdate({ kind: 'text', session: 's', text: 'hi' }));
    assert.equal(parseUpdate({ kind: 'text', session: 's' }), undefined);
    assert.equal(parseUpdate({ kind: 'tool_result', session: 's', tool: 'x' }), undefined);
    assert.equal(parseUpdate({ kind: 'weird', session: 's' }), undefined);
    assert.equal(parseUpdate([]), undefined);
  });
});
