import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ActivityTracker } from '../src/view/activity';
import { DialogBook } from '../src/view/dialogs';
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

describe('activity across sessions', () => {
  it('is awaiting while a call waits, running while a turn runs, idle after', () => {
    const activity = new ActivityTracker();
    assert.equal(activity.state, 'idle');
    activity.apply({ kind: 'status', session: 'a', status: 'running', detail: null });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'pending' });
    assert.equal(activity.state, 'awaiting');
    activity.apply({ kind: 'approval', session: 'a', call_id: 'c', tool: 'command', summary: 'x', decision: 'allowed' });
    assert.equal(activity.state, 'running');
    activity.apply({ kind: 'status', session: 'a', status: 'awaiting_approval', detail: null });
    assert.equal(activity.state, 'awaiting');
    assert.deepEqual(activity.awaitingSessions(), ['a']);
    activity.apply({ kind: 'status', session: 'a', status: 'running', detail: null });
    activity.apply({ kind: 'status', session: 'a', status: 'done', detail: null });
    assert.equal(activity.state, 'idle');
  });
});

describe('tether/update params', () => {
  it('are taken only when they have the fields their kind needs', () => {
    assert.ok(parseUpdate({ kind: 'text', session: 's', text: 'hi' }));
    assert.ok(parseUpdate({ kind: 'status', session: 's', status: 'done', detail: null }));
    assert.equal(parseUpdate({ kind: 'text', session: 's' }), undefined);
    assert.equal(parseUpdate({ kind: 'tool_result', session: 's', tool: 'x' }), undefined);
    assert.equal(parseUpdate({ kind: 'weird', session: 's' }), undefined);
    assert.equal(parseUpdate({ kind: 'toString', session: 's' }), undefined);
    assert.equal(parseUpdate([]), undefined);
  });
});
