/**
 * The language client: starts `tether serve` with the typed settings as
 * `initializationOptions` (and sends their changes), forwards `tether/update`, lets
 * approvals.ts answer the server's dialogs, applies and saves tether's edits, and calls
 * the contract's commands. The turn commands go with `"wait": false`, so no request
 * lasts as long as a turn. The client registers the server's own command ids
 * (tether.run and the rest) with VS Code itself; the extension calls them by request,
 * not by those ids.
 */

import * as vscode from 'vscode';
import {
  ApplyWorkspaceEditRequest,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  ShowMessageRequest,
  State,
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditResult,
  type LanguageClientOptions,
  type MessageActionItem,
  type ServerOptions,
  type ShowMessageRequestParams,
} from 'vscode-languageclient/node';

import { SECTION, serverLaunch, serverSettings } from './configuration';
import {
  editedDocuments,
  editedVersions,
  saveAfterAction,
  saveAfterEdit,
  type Before,
  type Snapshot,
} from './view/edits';
import {
  parseOutcome,
  parseUpdate,
  type Commands,
  type History,
  type Outcome,
  type Planned,
  type RewindWhat,
  type Rewound,
  type SessionSummary,
  type Update,
} from './view/protocol';
import { droppedKeys, type Layer } from './view/settings';

export type DialogHandler = (params: ShowMessageRequestParams) => Promise<MessageActionItem | null>;

/** The commands that run a turn: sent with `"wait": false`. */
const TURN_COMMANDS = new Set(['tether.run', 'tether.approve', 'tether.deny', 'tether.applied']);

export class TetherClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient> | undefined;
  /** The settings the running server was started with (its initializationOptions). */
  private initial: Layer = {};
  private edits: Promise<unknown> = Promise.resolve();
  /** The documents each offered *Apply patch* action edits, as they stood when it was offered. */
  private readonly offered = new Map<string, Map<string, Snapshot>>();
  private readonly updates = new vscode.EventEmitter<Update>();
  private readonly stopped = new vscode.EventEmitter<void>();
  readonly onUpdate = this.updates.event;
  /** The server stopped while running (it crashed, or was restarted). */
  readonly onStopped = this.stopped.event;

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly secrets: vscode.SecretStorage,
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

  /**
   * The typed settings or the API key changed: sent as `workspace/didChangeConfiguration`
   * (section `tether`). A key given at start and unset now needs a new server (the server
   * keeps its initializationOptions beneath every change).
   */
  async settingsChanged(): Promise<void> {
    if (this.client === undefined) {
      return; // the next start sends them
    }
    const layer = await serverSettings(this.secrets);
    const dropped = droppedKeys(this.initial, layer);
    if (dropped.length > 0) {
      this.output.info(`${dropped.join(', ')} unset: starting tether serve again`);
      await this.restart();
      return;
    }
    await this.client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { [SECTION]: layer },
    });
  }

  run(prompt: string, session?: string): Promise<Outcome> {
    return this.turn('tether.run', session === undefined ? { prompt } : { prompt, session });
  }

  approve(session: string, calls?: string[], remember?: 'session' | 'workspace'): Promise<Outcome> {
    return this.turn('tether.approve', { session, calls, remember });
  }

  deny(session: string, calls?: string[], reason?: string): Promise<Outcome> {
    return this.turn('tether.deny', { session, calls, reason });
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

  /** Takes a turn back: its change to the files, what the model is sent of it, or both. */
  rewind(session: string, turn: number, what: RewindWhat): Promise<Rewound> {
    return this.execute('tether.rewind', { session, turn, what });
  }

  /** The file a waiting patch edits, as it is now and as the patch would leave it. */
  planned(session: string, call: string): Promise<Planned> {
    return this.execute('tether.planned', { session, call });
  }

  async dispose(): Promise<void> {
    this.updates.dispose();
    this.stopped.dispose();
    await this.client?.dispose();
  }

  /** A turn command with `"wait": false`: Started at once, or the result of a turn that could not run. */
  private async turn<C extends 'tether.run' | 'tether.approve' | 'tether.deny'>(
    command: C,
    argument: Commands[C]['argument'],
  ): Promise<Outcome> {
    return parseOutcome(await this.execute(command, { ...argument, wait: false }));
  }

  /** One command of the contract, its argument and result typed by the contract's schema. */
  private async execute<C extends keyof Commands>(
    command: C,
    argument: Commands[C]['argument'] & { wait?: boolean },
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
    const initial = await serverSettings(this.secrets);
    const server: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: launch.env, cwd: launch.cwd },
    };
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      outputChannel: this.output,
      initializationOptions: { [SECTION]: initial },
      middleware: {
        provideCodeActions: async (document, range, context, token, next) => {
          const actions = await next(document, range, context, token);
          this.rememberOffered(actions ?? []);
          return actions;
        },
        // The code actions' commands: their turn goes on without a request waiting for it,
        // and a patch the person applied is saved first, as tether's own edits are.
        executeCommand: async (command, args: unknown[], next): Promise<unknown> => {
          const [first, ...rest] = args;
          if (command === 'tether.applied' && isObject(first) && typeof first.call === 'string') {
            await this.saveApplied(first.call);
          }
          if (TURN_COMMANDS.has(command) && isObject(first) && !('wait' in first)) {
            return (await next(command, [{ ...first, wait: false }, ...rest])) as unknown;
          }
          return (await next(command, args)) as unknown;
        },
      },
    };
    const client = new LanguageClient('tether', 'tether', server, options);
    client.onNotification('tether/update', (params: unknown) => {
      const update = parseUpdate(params);
      if (update !== undefined) {
        this.updates.fire(update);
      }
    });
    // Registered before start, so they take the place of the client's own handlers.
    client.onRequest(ShowMessageRequest.type, (params) => this.dialogs(params));
    client.onRequest(ApplyWorkspaceEditRequest.type, (params) => {
      const applied = this.edits.then(() => this.applyEdit(client, params));
      this.edits = applied.catch(() => undefined); // one edit at a time, in order
      return applied;
    });
    client.onDidChangeState((event) => {
      if (event.oldState === State.Running && this.client === client) {
        this.stopped.fire();
      }
    });
    this.output.info(`starting ${[launch.command, ...launch.args].join(' ')} (found by ${launch.how})`);
    await client.start();
    this.client = client;
    this.initial = initial;
    return client;
  }

  private rememberOffered(actions: (vscode.Command | vscode.CodeAction)[]): void {
    for (const action of actions) {
      if (!(action instanceof vscode.CodeAction) || action.command?.command !== 'tether.applied') {
        continue;
      }
      const [recorded] = (action.command.arguments ?? []) as unknown[];
      if (!isObject(recorded) || typeof recorded.call !== 'string' || action.edit === undefined) {
        continue;
      }
      const documents = new Map<string, Snapshot>();
      for (const [uri] of action.edit.entries()) {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        if (doc !== undefined && doc.uri.scheme === 'file') {
          documents.set(uri.toString(), { version: doc.version, dirty: doc.isDirty });
        }
      }
      this.offered.set(recorded.call, documents);
    }
  }

  /** After *Apply patch*: saves what the action's edit changed in a document that was saved. */
  private async saveApplied(call: string): Promise<void> {
    const documents = this.offered.get(call);
    this.offered.delete(call);
    for (const [uri, offered] of documents ?? []) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (doc !== undefined && saveAfterAction(offered, { version: doc.version, dirty: doc.isDirty })) {
        if (!(await doc.save())) {
          this.output.warn(`${doc.uri.fsPath}: the applied patch could not be saved`);
        }
      }
    }
  }

  /**
   * tether's `workspace/applyEdit`, as the language client applies it (one undoable edit,
   * refused when a document changed since the server read it), and then each document it
   * changed is saved when it had no unsaved changes before: a command run next sees the
   * patch on disk. Undo still takes the patch back. The answer waits for the saves.
   */
  private async applyEdit(
    client: LanguageClient,
    params: ApplyWorkspaceEditParams,
  ): Promise<ApplyWorkspaceEditResult> {
    const p2c = client.protocol2CodeConverter;
    const open = new Map(vscode.workspace.textDocuments.map((doc) => [doc.uri.toString(), doc]));
    for (const [uri, version] of editedVersions(params.edit)) {
      const doc = open.get(p2c.asUri(uri).toString());
      if (version >= 0 && doc !== undefined && doc.version !== version) {
        return { applied: false, failureReason: `${doc.uri.fsPath} changed since tether read it` };
      }
    }
    const uris = editedDocuments(params.edit).map((uri) => p2c.asUri(uri));
    const before = new Map<string, Before | undefined>();
    for (const uri of uris) {
      const doc = open.get(uri.toString());
      before.set(uri.toString(), doc && { dirty: doc.isDirty, scheme: doc.uri.scheme });
    }
    const edit = await p2c.asWorkspaceEdit(params.edit);
    const applied = await vscode.workspace.applyEdit(edit);
    if (!applied) {
      return { applied: false };
    }
    for (const uri of uris) {
      if (!saveAfterEdit(before.get(uri.toString()), uri.scheme)) {
        this.output.info(`${uri.fsPath} had unsaved changes: tether's edit is left unsaved in it`);
        continue;
      }
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (doc?.isDirty === true && !(await doc.save())) {
        this.output.warn(`${uri.fsPath}: tether's edit could not be saved`);
      }
    }
    return { applied: true };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
