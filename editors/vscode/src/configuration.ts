/** The extension's settings: how to start `tether serve`, and with what environment. */

import * as vscode from 'vscode';

export const SECTION = 'tether';
const DEFAULT_COMMAND = ['tether', 'serve'];

export interface ServerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
}

/** `tether.serverCommand` and `tether.env`, with `${workspaceFolder}` filled in. */
export function serverLaunch(): ServerLaunch {
  const settings = vscode.workspace.getConfiguration(SECTION);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const fill = (value: string): string =>
    folder === undefined ? value : value.split('${workspaceFolder}').join(folder);

  const raw = settings.get<unknown>('serverCommand');
  const command =
    Array.isArray(raw) && raw.length > 0 && raw.every((part) => typeof part === 'string')
      ? raw
      : DEFAULT_COMMAND;
  const extra: Record<string, string> = {};
  const rawEnv = settings.get<unknown>('env');
  if (typeof rawEnv === 'object' && rawEnv !== null) {
    for (const [key, value] of Object.entries(rawEnv)) {
      if (typeof value === 'string') {
        extra[key] = fill(value);
      }
    }
  }
  const [program = 'tether', ...args] = command.map(fill);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  return { command: program, args, env: { ...env, ...extra }, cwd: folder };
}

/** Whether a settings change means the server must be started again. */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return (
    event.affectsConfiguration(`${SECTION}.serverCommand`) ||
    event.affectsConfiguration(`${SECTION}.env`)
  );
}
