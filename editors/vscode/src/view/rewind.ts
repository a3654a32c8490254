/**
 * Rewind, apart from VS Code: which turns of a session can be taken back (from
 * `tether.history`), what each choice does, and how `tether.rewind`'s answer reads.
 */

import type { History, RewindWhat, Rewound } from './protocol';

/** A turn of a session: its prompt, and the files it changed (none: only its conversation). */
export interface TurnChoice {
  turn: number;
  prompt: string;
  files: string[];
}

/** What a rewind can take back, in the order offered; the first is the default. */
export const REWIND_WHATS: readonly { what: RewindWhat; label: string; detail: string }[] = [
  {
    what: 'files',
    label: 'Files',
    detail: "Take the turn's change to the files back; your edits since stay.",
  },
  {
    what: 'conversation',
    label: 'Conversation',
    detail: 'The model is no longer sent this turn and what followed (the history keeps it).',
  },
  { what: 'both', label: 'Files and conversation', detail: 'Both of the above.' },
];

/** What can be taken back of a turn: the conversation always, files when it changed some. */
export function whatsFor(files: readonly string[]): RewindWhat[] {
  return REWIND_WHATS.map((w) => w.what).filter((what) => files.length > 0 || what === 'conversation');
}

/** Each turn of the session, newest first, with its prompt and the files it changed. */
export function turnChoices(history: History): TurnChoice[] {
  const files = new Map(history.checkpoints.map((c) => [c.turn, c.files]));
  const turns = new Map<number, TurnChoice>();
  for (const message of history.messages) {
    const turn = message.turn;
    if (message.role === 'user' && typeof turn === 'number' && !turns.has(turn)) {
      turns.set(turn, { turn, prompt: message.content, files: files.get(turn) ?? [] });
    }
  }
  for (const [turn, changed] of files) {
    if (!turns.has(turn)) {
      turns.set(turn, { turn, prompt: '', files: changed }); // its prompt was compacted away
    }
  }
  return [...turns.values()].sort((a, b) => b.turn - a.turn);
}

/** A list of paths for a sentence: the first few, then how many more. */
export function pathList(paths: readonly string[], shown = 5): string {
  const head = paths.slice(0, shown).join(', ');
  return paths.length > shown ? `${head} and ${paths.length - shown} more` : head;
}

/** How a rewind reads: what it did, and (apart, as a warning) what it left as it is. */
export function describeRewound(result: Rewound): { text: string; warning?: string } {
  const done: string[] = [];
  if (result.restored.length > 0) {
    done.push(`restored ${pathList(result.restored)}`);
  }
  if (result.removed.length > 0) {
    done.push(`removed ${pathList(result.removed)}`);
  }
  if (result.what !== 'conversation' && done.length === 0) {
    done.push('no file changed');
  }
  if (result.what !== 'files') {
    done.push(`the model is no longer sent turn ${result.turn} and what followed`);
  }
  const notes = result.notes.map((note) => ` ${note.endsWith('.') ? note : `${note}.`}`).join('');
  const text = `Rewound turn ${result.turn} (${result.what}): ${done.join('; ')}.${notes}`;
  if (result.conflicts.length === 0) {
    return { text };
  }
  const left = result.conflicts.map((c) => `${c.path}: ${c.reason}`).join('; ');
  return { text, warning: `Left as they are (your edits overlap the turn's): ${left}` };
}
