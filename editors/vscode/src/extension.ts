/** Activation: builds the parts and wires them together; each lives in its own module. */

import * as vscode from 'vscode';

import { Approvals } from './approvals';
import { ChatView, VIEW_ID } from './chatView';
import { TetherClient } from './client';
import { registerCommands } from './commands';
import { affectsServer } from './configuration';
import { ProposedChanges, SCHEME } from './diff';
import { StatusBar } from './statusBar';
import { ActivityTracker } from './view/activity';
import { ChatController, type Backend } from './view/controller';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('tether', { log: true });
  const approvals = new Approvals();
  const client = new TetherClient(output, (params) => approvals.showDialog(params));
  approvals.attach(client);
  const activity = new ActivityTracker();
  const statusBar = new StatusBar();
  const diffs = new ProposedChanges();

  const backend: Backend = {
    run: (prompt, session) => client.run(prompt, session),
    decide: (session, callId, answer) => approvals.decide(session, callId, answer),
    decideAll: (session, answer) => approvals.decideAll(session, answer),
    cancel: (session) => client.cancel(session),
    sessions: async () => {
      const sessions = await client.sessions();
      for (const info of sessions) {
        activity.parkedSession(info.id, info.status === 'awaiting_approval');
      }
      statusBar.show(activity.state);
      return sessions;
    },
    history: (session) => client.history(session),
    showDiff: async (call) => diffs.show(call.id, await client.planned(call.session, call.id)),
  };
  const view = new ChatView(context.extensionUri, () => controller);
  const controller = new ChatController(backend, (message) => {
    view.post(message);
  });

  context.subscriptions.push(
    output,
    client,
    statusBar,
    diffs,
    view,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, diffs),
    vscode.window.registerWebviewViewProvider(VIEW_ID, view),
    client.onUpdate((update) => {
      activity.apply(update);
      approvals.observe(update);
      controller.update(update);
      statusBar.show(activity.state);
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsServer(event)) {
        void client.restart();
      }
    }),
    ...registerCommands({ client, approvals, activity, controller, view }),
  );

  try {
    await client.start();
    await controller.refresh();
  } catch (error) {
    output.error(`tether serve did not start: ${String(error)}`);
    void vscode.window.showErrorMessage(
      'tether: the server did not start; check the setting tether.serverCommand.',
    );
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
