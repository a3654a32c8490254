/** The extension's own commands (the server's tether.run etc. belong to the language client). */

import * as vscode from 'vscode';

import type { Approvals } from './approvals';
import type { ChatView } from './chatView';
import type { TetherClient } from './client';
import { API_KEY_SECRET } from './configuration';
import { checkSetup } from './doctor';
import { rewindCommand } from './rewind';
import type { ActivityTracker } from './view/activity';
import type { ChatController } from './view/controller';
import type { Answer } from './view/protocol';

export interface Parts {
  client: TetherClient;
  approvals: Approvals;
  activity: ActivityTracker;
  controller: ChatController;
  view: ChatView;
  secrets: vscode.SecretStorage;
  output: vscode.LogOutputChannel;
}

export function registerCommands(parts: Parts): vscode.Disposable[] {
  const { controller, view } = parts;
  return [
    vscode.commands.registerCommand('tether.openChat', () => view.reveal()),
    vscode.commands.registerCommand('tether.ask', async (prompt?: unknown) => {
      const text =
        typeof prompt === 'string'
          ? prompt
          : await vscode.window.showInputBox({ prompt: 'Ask tether', ignoreFocusOut: true });
      if (text !== undefined && text.trim() !== '') {
        await view.reveal();
        await controller.ask(text);
      }
    }),
    vscode.commands.registerCommand('tether.approvePending', () => decidePending(parts, 'allow')),
    vscode.commands.registerCommand('tether.denyPending', () => decidePending(parts, 'deny')),
    vscode.commands.registerCommand('tether.stop', async () => {
      const session = controller.session;
      const stoppable = controller.status === 'running' || controller.status === 'awaiting_approval';
      if (session === null || !stoppable) {
        void vscode.window.showInformationMessage('tether: no turn is running in the chat.');
        return;
      }
      await controller.stop();
    }),
    vscode.commands.registerCommand('tether.rewindTurn', () =>
      rewindCommand(parts.client, controller, () => view.reveal()),
    ),
    vscode.commands.registerCommand('tether.setApiKey', () => setApiKey(parts.secrets)),
    vscode.commands.registerCommand('tether.doctor', () => checkSetup(parts.output)),
  ];
}

/** The provider's API key, kept in VS Code's SecretStorage (never settings.json); empty removes it. */
async function setApiKey(secrets: vscode.SecretStorage): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'tether: the API key for the provider',
    prompt:
      "Kept in VS Code's secret storage and sent to the tether server as provider.api_key. " +
      'Leave it empty to remove the stored key.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) {
    return;
  }
  if (key.trim() === '') {
    await secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage('tether: the stored API key is removed.');
  } else {
    await secrets.store(API_KEY_SECRET, key.trim());
    void vscode.window.showInformationMessage("tether: the API key is stored in VS Code's secret storage.");
  }
}

/** Decides every waiting call of the shown session, else of a session picked from those waiting. */
async function decidePending(parts: Parts, answer: Answer): Promise<void> {
  const { controller, approvals, activity, client } = parts;
  if (controller.pending().length > 0) {
    await controller.decideAll(answer);
    return;
  }
  const waiting = new Set([...activity.awaitingSessions(), ...approvals.sessionsAsking()]);
  for (const info of await client.sessions()) {
    if (info.status === 'awaiting_approval') {
      waiting.add(info.id);
    }
  }
  const sessions = [...waiting];
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('tether: no call is waiting for approval.');
    return;
  }
  const session =
    sessions.length === 1
      ? sessions[0]
      : await vscode.window.showQuickPick(sessions, { placeHolder: 'Which session?' });
  if (session !== undefined) {
    await controller.open(session);
    await controller.decideAll(answer);
  }
}
