/** Activation: builds the parts and wires them together; each lives in its own module. */

import * as vscode from 'vscode';

import { Approvals } from './approvals';
import { ChatView, VIEW_ID } from './chatView';
import { TetherClient } from './client';
import { registerCommands } from './commands';
import { chooseRewind, showRewound } from './rewind';
import { affectsServer, affectsSettings, API_KEY_SECRET, ServerMissing } from './configuration';
import { ProposedChanges, SCHEME } from './diff';
import { StatusBar } from './statusBar';
import { ActivityTracker } from './view/activity';
import { ChatController, type Backend } from './view/controller';
import { UsageBook } from './view/usage';

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('tether', { log: true });
  const approvals = new Approvals();
  const client = new TetherClient(output, context.secrets, (params) => approvals.showDialog(params));
  const activity = new ActivityTracker();
  const usage = new UsageBook();
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
    history: async (session) => {
      const history = await client.history(session);
      usage.seed(session, history.stats);
      return history;
    },
    showDiff: async (call) => diffs.show(call.id, await client.planned(call.session, call.id)),
    copy: async (text) => vscode.env.clipboard.writeText(text),
    chooseRewind,
    rewind: (session, turn, what) => client.rewind(session, turn, what),
    rewound: showRewound,
  };
  const view = new ChatView(context.extensionUri, () => controller);
  const controller = new ChatController(backend, (message) => {
    view.post(message);
  });
  approvals.attach(client, (callId, offers, note) => {
    controller.dialog(callId, offers, note);
  });
  const shownChanged = (): void => {
    statusBar.showUsage(usage.shown(controller.session));
    const stoppable = controller.status === 'running' || controller.status === 'awaiting_approval';
    void vscode.commands.executeCommand('setContext', 'tether.turnActive', stoppable);
  };

  context.subscriptions.push(
    output,
    client,
    statusBar,
    diffs,
    view,
    controller.onChange(shownChanged),
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, diffs),
    vscode.window.registerWebviewViewProvider(VIEW_ID, view),
    client.onUpdate((update) => {
      activity.apply(update);
      approvals.observe(update);
      if (update.kind === 'usage') {
        usage.apply(update);
        statusBar.showUsage(usage.shown(controller.session));
      }
      controller.update(update);
      statusBar.show(activity.state);
    }),
    client.onStopped(() => {
      controller.serverLost();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (affectsServer(event)) {
        void start(client, output, () => client.restart());
      } else if (affectsSettings(event)) {
        void client.settingsChanged().catch((error: unknown) => {
          output.error(`the settings could not be sent: ${String(error)}`);
        });
      }
    }),
    context.secrets.onDidChange((event) => {
      if (event.key === API_KEY_SECRET) {
        void client.settingsChanged().catch((error: unknown) => {
          output.error(`the API key could not be sent: ${String(error)}`);
        });
      }
    }),
    ...registerCommands({ client, approvals, activity, controller, view, secrets: context.secrets, output }),
  );

  if (await start(client, output, () => client.start())) {
    await controller.refresh();
  }
}

/**
 * Starts (or restarts) the server; when it cannot, says what to do (without holding up
 * the caller), with Retry and Open Settings.
 */
async function start(
  client: TetherClient,
  output: vscode.LogOutputChannel,
  how: () => Promise<unknown>,
): Promise<boolean> {
  try {
    await how();
    return true;
  } catch (error) {
    const missing = error instanceof ServerMissing;
    output.error(missing ? error.message : `tether serve did not start: ${String(error)}`);
    const message = missing
      ? error.message
      : 'tether: the server did not start (see the output "tether"); check the setting tether.serverCommand.';
    void vscode.window.showErrorMessage(message, 'Retry', 'Open Settings').then(async (choice) => {
      if (choice === 'Retry') {
        await start(client, output, () => client.restart());
      } else if (choice === 'Open Settings') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'tether.serverCommand');
      }
    });
    return false;
  }
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
