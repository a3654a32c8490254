/**
 * A pending patch in VS Code's diff editor: the file as it is now (the live
 * buffer when it is open) beside the text the patch would leave.
 */

import * as path from 'node:path';
import * as vscode from 'vscode';

import { patchArguments, proposedText } from './view/patch';
import type { ToolEntry } from './view/protocol';

export const SCHEME = 'tether-proposed';

export class ProposedChanges implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  async show(call: ToolEntry): Promise<void> {
    const args = patchArguments(call.arguments);
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (call.tool !== 'patch' || args === undefined || root === undefined) {
      throw new Error(`${call.summary} is not a patch of a workspace file`);
    }
    const file = path.isAbsolute(args.path)
      ? vscode.Uri.file(args.path)
      : vscode.Uri.joinPath(root, args.path);
    const current = await currentText(file);
    const proposed = proposedText(current, args);
    if (!proposed.ok) {
      throw new Error(proposed.error);
    }
    const query = `call=${encodeURIComponent(call.id)}`;
    const right = vscode.Uri.from({ scheme: SCHEME, path: file.path, query });
    this.put(right, proposed.text);
    let left = file;
    if (current === undefined) {
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

async function currentText(file: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.toString());
  if (open !== undefined) {
    return open.getText();
  }
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
  } catch {
    return undefined;
  }
}
