/** The status bar item: idle, running or awaiting approval; a click opens the chat. */

import * as vscode from 'vscode';

import type { Activity } from './view/activity';

const LOOKS: Record<Activity, { text: string; tooltip: string }> = {
  idle: { text: '$(comment-discussion) tether: idle', tooltip: 'tether: no turn is running' },
  running: { text: '$(sync~spin) tether: running', tooltip: 'tether: a turn is running' },
  awaiting: {
    text: '$(bell-dot) tether: awaiting approval',
    tooltip: 'tether: a call waits for your approval',
  },
};

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    'tether.status',
    vscode.StatusBarAlignment.Left,
    10,
  );

  constructor() {
    this.item.name = 'tether';
    this.item.command = 'tether.openChat';
    this.show('idle');
    this.item.show();
  }

  show(activity: Activity): void {
    const look = LOOKS[activity];
    this.item.text = look.text;
    this.item.tooltip = look.tooltip;
    this.item.backgroundColor =
      activity === 'awaiting' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
