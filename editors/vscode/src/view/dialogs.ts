/**
 * The server asks about each approval-requiring call twice over: a `tether/update`
 * approval (decision `pending`) and then, when dialogs are on, a
 * `window/showMessageRequest`. This book pairs the two, so that an answer given on
 * the chat view's card can answer the open dialog, and the dialog's answer can
 * settle the card.
 */

export const DIALOG_ACTIONS = ['Allow', 'Allow always', 'Deny'] as const;
export type DialogAction = (typeof DIALOG_ACTIONS)[number];
const PREFIX = 'tether wants to run ';

export interface Announced {
  session: string;
  callId: string;
  tool: string;
  summary: string;
}

export class DialogBook {
  private readonly announced: Announced[] = [];
  private readonly open = new Map<string, (title: DialogAction) => void>();

  /** A call now waits for the person (an approval update with decision `pending`). */
  announce(call: Announced): void {
    this.settle(call.callId);
    this.announced.push(call);
  }

  /** The call was decided, or ended: it has no dialog to pair with any more. */
  settle(callId: string): void {
    const at = this.announced.findIndex((c) => c.callId === callId);
    if (at >= 0) {
      this.announced.splice(at, 1);
    }
    this.open.delete(callId);
  }

  /** The announced call a dialog asks about; the latest one whose words match. */
  match(message: string, actions: readonly string[]): Announced | undefined {
    const isApproval =
      message.startsWith(PREFIX) &&
      actions.length === DIALOG_ACTIONS.length &&
      DIALOG_ACTIONS.every((a, i) => actions[i] === a);
    if (!isApproval) {
      return undefined;
    }
    for (const call of [...this.announced].reverse()) {
      if (message.startsWith(`${PREFIX}${call.tool}: ${call.summary}`)) {
        return call;
      }
    }
    return undefined;
  }

  /** A dialog about `callId` is showing; `answer` closes it with a button's title. */
  opened(callId: string, answer: (title: DialogAction) => void): void {
    this.open.set(callId, answer);
  }

  /** The dialog of `callId` was answered on its own (or dismissed). */
  closed(callId: string): void {
    this.open.delete(callId);
  }

  isOpen(callId: string): boolean {
    return this.open.has(callId);
  }

  /** Answers the open dialog of `callId`, if there is one; true when there was. */
  answer(callId: string, title: DialogAction): boolean {
    const answer = this.open.get(callId);
    if (answer === undefined) {
      return false;
    }
    this.open.delete(callId);
    answer(title);
    return true;
  }

  openCalls(): Announced[] {
    return this.announced.filter((c) => this.open.has(c.callId));
  }
}
