/**
 * The server asks about each approval-requiring call twice over: a `tether/update`
 * approval (decision `pending`) and then, when dialogs are on, a
 * `window/showMessageRequest` whose action items carry the call's `call_id` (the
 * language client advertises `additionalPropertiesSupport`). This book pairs the two
 * by that id, never by the message's wording, so that an answer given on the chat
 * view's card answers the open dialog, and the dialog's answer settles the card.
 */

import type { Answer } from './protocol';

export const DIALOG_ACTIONS = ['Allow', 'Allow always', 'Deny'] as const;
export type DialogAction = (typeof DIALOG_ACTIONS)[number];

export const TITLES: Record<Answer, DialogAction> = {
  allow: 'Allow',
  always: 'Allow always',
  deny: 'Deny',
};

/** An action item as the dialog sends it: a title, and the call's id as an extra property. */
export interface ActionItem {
  title: string;
  call_id?: unknown;
  [extra: string]: unknown;
}

export interface Announced {
  session: string;
  callId: string;
  tool: string;
  summary: string;
}

/** The call an approval dialog asks about: the `call_id` its action items carry. */
export function dialogCall(actions: readonly ActionItem[]): string | undefined {
  for (const action of actions) {
    if (typeof action.call_id === 'string' && action.call_id !== '') {
      return action.call_id;
    }
  }
  return undefined;
}

/** The answers a dialog offers, in the card's terms (`Allow always` is not always offered). */
export function offeredAnswers(actions: readonly ActionItem[]): Answer[] {
  const titles = new Set(actions.map((a) => a.title));
  return (Object.keys(TITLES) as Answer[]).filter((answer) => titles.has(TITLES[answer]));
}

/** The dialog's warning about open documents that differ from their files, if it has one. */
export function unsavedNote(message: string): string | undefined {
  const lines = message.split('\n');
  const at = lines.findIndex((line) => line.startsWith('Unsaved in the editor'));
  if (at < 0) {
    return undefined;
  }
  // The line, and any lines that continue it (an indented or bulleted list of files).
  const more = lines.slice(at + 1);
  const end = more.findIndex((line) => !/^\s+\S|^\s*[-•*] /.test(line));
  return [lines[at], ...more.slice(0, end < 0 ? more.length : end)].join('\n').trim();
}

interface OpenDialog {
  actions: readonly ActionItem[];
  answer: (item: ActionItem) => void;
}

export class DialogBook {
  private readonly announced = new Map<string, Announced>();
  private readonly open = new Map<string, OpenDialog>();

  /** A call now waits for the person (an approval update with decision `pending`). */
  announce(call: Announced): void {
    this.announced.set(call.callId, call);
  }

  /** The call was decided, or ended: it has no dialog to pair with any more. */
  settle(callId: string): void {
    this.announced.delete(callId);
    this.open.delete(callId);
  }

  /** The announced call of `callId`, if any. */
  call(callId: string): Announced | undefined {
    return this.announced.get(callId);
  }

  /** A dialog about `callId` is showing; `answer` closes it with one of its own items. */
  opened(callId: string, actions: readonly ActionItem[], answer: (item: ActionItem) => void): void {
    this.open.set(callId, { actions, answer });
  }

  /** The dialog of `callId` was answered on its own (or dismissed). */
  closed(callId: string): void {
    this.open.delete(callId);
  }

  isOpen(callId: string): boolean {
    return this.open.has(callId);
  }

  /**
   * Answers the open dialog of `callId` with its item titled `title` (the item itself,
   * `call_id` and all); true when there was such a dialog. An answer the dialog does not
   * offer is refused, never swapped for another.
   */
  answer(callId: string, title: DialogAction): boolean {
    const dialog = this.open.get(callId);
    if (dialog === undefined) {
      return false;
    }
    const item = dialog.actions.find((a) => a.title === title);
    if (item === undefined) {
      throw new Error(`the dialog for this call does not offer "${title}"`);
    }
    this.open.delete(callId);
    dialog.answer(item);
    return true;
  }

  /** Announced calls whose dialog is open. */
  openCalls(): Announced[] {
    return [...this.announced.values()].filter((c) => this.open.has(c.callId));
  }
}
