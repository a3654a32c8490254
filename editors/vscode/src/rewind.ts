/** Rewind in VS Code: the quick picks that choose a turn and what of it, and the report. */

import * as vscode from 'vscode';

import type { TetherClient } from './client';
import type { ChatController } from './view/controller';
import type { RewindWhat, Rewound } from './view/protocol';
import { describeRewound, pathList, REWIND_WHATS, turnChoices, whatsFor } from './view/rewind';

/** Files (the default), conversation or both; only conversation for a turn that changed none. */
export async function chooseRewind(turn: number, files: string[]): Promise<RewindWhat | undefined> {
  const offered = whatsFor(files);
  const items = REWIND_WHATS.filter((w) => offered.includes(w.what)).map((w) => ({
    label: w.label,
    detail: w.detail,
    what: w.what,
  }));
  const changed = files.length > 0 ? `it changed ${pathList(files)}` : 'it changed no file';
  const picked = await vscode.window.showQuickPick(items, {
    title: `tether: rewind turn ${turn}`,
    placeHolder: `What to take back of turn ${turn}? (${changed})`,
  });
  return picked?.what;
}

/** What a rewind did, as a notification; what it left as it is, as a warning. */
export function showRewound(result: Rewound): void {
  const { text, warning } = describeRewound(result);
  void vscode.window.showInformationMessage(`tether: ${text}`);
  if (warning !== undefined) {
    void vscode.window.showWarningMessage(`tether: ${warning}`);
  }
}

/**
 * tether.rewindTurn (not tether.rewind: the language client registers the server's own
 * command by that name): the chat's session (else one picked), one of its turns (picked), then
 * what to take back of it; shown in the chat, which shows the rewind.
 */
export async function rewindCommand(
  client: TetherClient,
  controller: ChatController,
  reveal: () => Promise<void>,
): Promise<void> {
  const session = controller.session ?? (await pickSession(client));
  if (session === undefined) {
    return;
  }
  const turns = turnChoices(await client.history(session));
  if (turns.length === 0) {
    void vscode.window.showInformationMessage('tether: this session has no turn to rewind.');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    turns.map((t) => ({
      label: `Turn ${t.turn}`,
      description: t.prompt.split('\n', 1)[0],
      detail: t.files.length > 0 ? `changed ${pathList(t.files)}` : 'changed no file',
      turn: t.turn,
    })),
    { title: 'tether: rewind a turn', placeHolder: 'Which turn? (the newest first)' },
  );
  if (picked === undefined) {
    return;
  }
  await reveal();
  await controller.open(session);
  await controller.rewind(picked.turn);
}

async function pickSession(client: TetherClient): Promise<string | undefined> {
  const sessions = await client.sessions();
  if (sessions.length === 0) {
    void vscode.window.showInformationMessage('tether: there is no session to rewind.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.title || s.id, description: s.updated, session: s.id })),
    { placeHolder: 'Which session?' },
  );
  return picked?.session;
}
