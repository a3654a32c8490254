/**
 * The chat view: a webview in tether's own activity-bar container. It only
 * carries messages between the webview and the ChatController (view/controller.ts)
 * and serves the page, under a Content-Security-Policy that allows nothing but
 * the extension's own script (by nonce) and style sheet: no inline script, no image,
 * no connection, nothing from elsewhere.
 */

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

import type { ChatController } from './view/controller';
import type { ToView } from './view/protocol';

export const VIEW_ID = 'tether.chat';

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: () => ChatController,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media'), this.scripts()],
    };
    webview.html = this.page(webview);
    this.disposables.push(
      webview.onDidReceiveMessage((message: unknown) => this.controller().receive(message)),
      view.onDidDispose(() => {
        this.view = undefined;
      }),
    );
  }

  post(message: ToView): void {
    void this.view?.webview.postMessage(message);
  }

  /** Shows the view (opening its container) and waits until it is resolved. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  /** Where the webview's script is: one file, bundled with markdown-it (`npm run build`). */
  private scripts(): vscode.Uri {
    return vscode.Uri.joinPath(this.extensionUri, 'out', 'webview');
  }

  private page(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.scripts(), 'chat.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>tether</title>
</head>
<body>
<header class="bar">
  <select id="sessions" aria-label="Session"></select>
  <button id="new" class="secondary" title="Start a new session">New</button>
</header>
<main id="transcript" aria-live="polite"></main>
<footer class="composer">
  <div id="status" class="status"></div>
  <textarea id="prompt" rows="3" placeholder="Ask tether… (Enter sends, Shift+Enter for a new line)"></textarea>
  <div class="actions">
    <button id="stop" class="secondary" hidden>Stop</button>
    <button id="ask">Ask</button>
  </div>
</footer>
<script type="module" nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
  }
}
