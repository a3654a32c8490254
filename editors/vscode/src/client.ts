/**
 * The language client: starts `tether serve`, forwards `tether/update`, lets
 * approvals.ts answer the server's dialogs, and calls the contract's commands.
 * The client registers the server's own command ids (tether.run and the rest)
 * with VS Code itself; the extension calls them by request, not by those ids.
 */

import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  ShowMessageRequest,
  type LanguageClientOptions,
  type MessageActionItem,
  type ServerOptions,
  type ShowMessageRequestParams,
} from 'vscode-languageclient/node';

import { serverLaunch } from './configuration';
import {
  parseUpdate,
  type Commands,
  type History,
  type Planned,
  type SessionSummary,
  type TurnResult,
  type Update,
} from './view/protocol';

export type DialogHandler = (params: ShowMessageRequestParams) => Promise<MessageActionItem | null>;

export class TetherClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  private readonly updates = new vscode.EventEmitter<Update>();
  readonly onUpdate = this.updates.event;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly dialogs: DialogHandler,
  ) {}

  /** Starts the server, once; every command waits for it. */
  start(): Promise<LanguageClient> {
    this.starting ??= this.launch().catch((error: unknown) => {
      this.starting = undefined; // the next command tries again
      throw error;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    this.starting = undefined;
    if (old !== undefined) {
      await old.dispose();
    }
    await this.start();
  }

  run(prompt: string, session?: string): Promise<TurnResult> {
    return this.execute('tether.run', session === undefined ? { prompt } : { prompt, session });
  }

  approve(session: string, calls?: string[], remember?: 'session' | 'workspace'): Promise<TurnResult> {
    return this.execute('tether.approve', { session, calls, remember });
  }

  deny(session: string, calls?: string[], reason?: string): Promise<TurnResult> {
    return this.execute('tether.deny', { session, calls, reason });
  }

  async cancel(session: string): Promise<boolean> {
    return (await this.execute('tether.cancel', { session })).cancelled;
  }

  async sessions(): Promise<SessionSummary[]> {
    return (await this.execute('tether.sessions', {})).sessions;
  }

  history(session: string): Promise<History> {
    return this.execute('tether.history', { session });
  }

  /** The file a waiting patch edits, as it is now and as the patch would leave it. */
  planned(session: string, call: string): Promise<Planned> {
    return this.execute('tether.planned', { session, call });
  }

  async dispose(): Promise<void> {
    this.updates.dispose();
    await this.client?.dispose();
  }

  /** One command of the contract, its argument and result typed by the contract's schema. */
  private async execute<C extends keyof Commands>(
    command: C,
    argument: Commands[C]['argument'],
  ): Promise<Commands[C]['result']> {
    const client = await this.start();
    const defined = Object.fromEntries(Object.entries(argument).filter(([, v]) => v !== undefined));
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [defined],
    });
    return result as Commands[C]['result'];
  }

  private async launch(): Promise<LanguageClient> {
    const launch = serverLaunch();
    const server: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: launch.env, cwd: launch.cwd },
    };
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
    };
    const client = new LanguageClient('tether', 'tether', server, options);
    client.onNotification('tether/update', (params: unknown) => {
      const update = parseUpdate(params);
      if (update !== undefined) {
        this.updates.fire(update);
      }
    });
    // Registered before start, so it takes the place of the client's own dialog handler.
    client.onRequest(ShowMessageRequest.type, (params) => this.dialogs(params));
    this.output.info(`starting ${[launch.command, ...launch.args].join(' ')}`);
    await client.start();
    this.client = client;
    return client;
  }
}
