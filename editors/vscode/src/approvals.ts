/**
 * Approvals in the editor: the server's dialog (a notification with Allow /
 * Allow always / Deny) and the chat view's cards answer the same question, so
 * whichever the person uses first decides. A dialog names its call by the `call_id`
 * its action items carry; the card of that call answers it with the dialog's own item.
 * A parked call (its dialog dismissed, or dialogs off) is decided with tether.approve /
 * tether.deny instead.
 */

import * as vscode from 'vscode';
import type { MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';
import { MessageType } from 'vscode-languageclient/node';

import type { TetherClient } from './client';
import {
  DialogBook,
  TITLES,
  dialogCall,
  offeredAnswers,
  unsavedNote,
  type ActionItem,
} from './view/dialogs';
import type { Answer, Outcome, Update } from './view/protocol';

/** Told when a call's dialog opens (what it offers and warns of) and when it closes. */
export type DialogListener = (callId: string, offers: Answer[] | undefined, note?: string) => void;

export class Approvals {
  private readonly book = new DialogBook();
  private client: TetherClient | undefined;
  private listener: DialogListener = () => undefined;

  /** Set once the client exists (the client needs `showDialog` to be created). */
  attach(client: TetherClient, listener: DialogListener): void {
    this.client = client;
    this.listener = listener;
  }

  observe(update: Update): void {
    if (update.kind === 'approval' && update.decision === 'pending') {
      this.book.announce({
        session: update.session,
        callId: update.call_id,
        tool: update.tool,
        summary: update.summary,
      });
    } else if (update.kind === 'approval' || update.kind === 'tool_result') {
      this.book.settle(update.call_id);
    } else if (update.kind === 'status' && update.status !== 'running') {
      for (const call of this.book.openCalls()) {
        if (call.session === update.session) {
          this.book.settle(call.callId);
        }
      }
    }
  }

  /** The server's `window/showMessageRequest`: shown as the language client would show it. */
  showDialog(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
    const actions: ActionItem[] = params.actions ?? [];
    const callId = dialogCall(actions);
    const shown = show(params.type, params.message, actions);
    if (callId === undefined) {
      return Promise.resolve(shown).then((item) => (item as MessageActionItem | undefined) ?? null);
    }
    this.listener(callId, offeredAnswers(actions), unsavedNote(params.message));
    return new Promise((resolve) => {
      let answered = false;
      this.book.opened(callId, actions, (item) => {
        answered = true;
        resolve(item as MessageActionItem);
        // Answered on the card: the notification cannot be closed through the API, so the
        // toasts go to the notification centre (a click on it there changes nothing).
        void vscode.commands.executeCommand('notifications.hideToasts');
      });
      void shown.then((item) => {
        if (answered) {
          if (item !== undefined) {
            const what = this.book.call(callId)?.summary ?? 'this call';
            void vscode.window.showInformationMessage(
              `tether: ${what} was already answered in the chat view.`,
            );
          }
          return;
        }
        this.book.closed(callId);
        this.listener(callId, undefined);
        resolve((item as MessageActionItem | undefined) ?? null);
      });
    });
  }

  /** One call: its open dialog is answered, else the parked call is decided. */
  async decide(session: string, callId: string, answer: Answer): Promise<Outcome | undefined> {
    if (this.book.answer(callId, TITLES[answer])) {
      return undefined;
    }
    const client = this.need();
    return answer === 'deny'
      ? client.deny(session, [callId])
      : client.approve(session, [callId], answer === 'always' ? 'workspace' : undefined);
  }

  /** Every call of `session` that waits: open dialogs are answered, parked calls decided. */
  async decideAll(session: string, answer: Answer): Promise<Outcome | undefined> {
    const open = this.book.openCalls().filter((c) => c.session === session);
    if (open.length > 0) {
      for (const call of open) {
        this.book.answer(call.callId, TITLES[answer]);
      }
      return undefined;
    }
    const client = this.need();
    return answer === 'deny'
      ? client.deny(session)
      : client.approve(session, undefined, answer === 'always' ? 'workspace' : undefined);
  }

  /** Sessions with a dialog open right now. */
  sessionsAsking(): string[] {
    return [...new Set(this.book.openCalls().map((c) => c.session))];
  }

  private need(): TetherClient {
    if (this.client === undefined) {
      throw new Error('the tether server is not started');
    }
    return this.client;
  }
}

function show(
  type: MessageType,
  message: string,
  actions: ActionItem[],
): Thenable<ActionItem | undefined> {
  switch (type) {
    case MessageType.Error:
      return vscode.window.showErrorMessage(message, ...actions);
    case MessageType.Warning:
      return vscode.window.showWarningMessage(message, ...actions);
    default:
      return vscode.window.showInformationMessage(message, ...actions);
  }
}
