/**
 * The status bar item: idle, running or awaiting approval, then how full the model's
 * window is and the session's tokens (from `usage` updates); a click opens the chat.
 */

import * as vscode from 'vscode';

import type { Activity } from './view/activity';
import { describeUsage, type SessionUsage } from './view/usage';

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

  private activity: Activity = 'idle';
  private usage: SessionUsage | undefined;

  constructor() {
    this.item.name = 'tether';
    this.item.command = 'tether.openChat';
    this.show('idle');
    this.item.show();
  }

  show(activity: Activity): void {
    this.activity = activity;
    this.draw();
  }

  /** The usage of the session the chat shows (undefined: none known yet). */
  showUsage(usage: SessionUsage | undefined): void {
    this.usage = usage;
    this.draw();
  }

  private draw(): void {
    const { activity, usage } = this;
    const look = LOOKS[activity];
    if (usage === undefined) {
      this.item.text = look.text;
      this.item.tooltip = look.tooltip;
    } else {
      const words = describeUsage(usage);
      this.item.text = `${look.text} · ${words.text}`;
      this.item.tooltip = `${look.tooltip}\n${words.tooltip}`;
    }
    this.item.backgroundColor =
      activity === 'awaiting' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
