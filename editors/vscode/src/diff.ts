/**
 * A waiting patch in VS Code's diff editor, as the server plans it (`tether.planned`):
 * the file as it is now (the live buffer when it is open) beside the text the patch
 * would leave. Nothing of the patch is worked out here.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';

import type { Planned } from './view/protocol';

export const SCHEME = 'tether-proposed';

export class ProposedChanges implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  async show(callId: string, planned: Planned): Promise<void> {
    const file = vscode.Uri.file(planned.path);
    const query = `call=${encodeURIComponent(callId)}`;
    const right = vscode.Uri.from({ scheme: SCHEME, path: file.path, query });
    this.put(right, planned.after);
    let left = file;
    if (planned.before === null) {
      left = vscode.Uri.from({ scheme: SCHEME, path: file.path, query: `${query}&before` });
      this.put(left, '');
    }
    const title = `${path.basename(file.path)} ↔ tether's patch`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }

  dispose(): void {
    this.changes.dispose();
  }

  private put(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changes.fire(uri);
  }
}
