/**
 * The extension's settings: how to start `tether serve` and with what environment
 * (`tether.serverCommand`, `tether.env`), and the server's own typed settings
 * (`tether.provider.*`, `tether.turn.*`, `tether.approval.dialogs`) with the API key
 * from VS Code's SecretStorage.
 */

import * as fs from 'node:fs';
import * as vscode from 'vscode';

import { locateServer } from './view/launch';
import { SETTINGS, serverLayer, type Layer } from './view/settings';

export const SECTION = 'tether';
/** Where the API key lives in SecretStorage (never in settings.json). */
export const API_KEY_SECRET = 'tether.provider.apiKey';

export interface ServerLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string | undefined;
  /** How the program was found: the setting, PATH, or the workspace's .venv. */
  how: 'setting' | 'path' | 'venv';
}

/** `tether serve` was not found: the message says what to install. */
export class ServerMissing extends Error {}

/** The value the person gave a setting (folder, workspace or user), not its default. */
function explicitValue(settings: vscode.WorkspaceConfiguration, key: string): unknown {
  const inspected = settings.inspect(key);
  return inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
}

/**
 * The program and environment of `tether serve`: `tether.serverCommand` when the person
 * set it to a program of their own, else `tether` on PATH, else the workspace's `.venv`
 * (`${workspaceFolder}` is replaced in the setting and in `tether.env`).
 */
export function serverLaunch(): ServerLaunch {
  const settings = vscode.workspace.getConfiguration(SECTION);
  const folders = (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
  const folder = folders[0];
  const fill = (value: string): string =>
    folder === undefined ? value : value.split('${workspaceFolder}').join(folder);

  const raw = explicitValue(settings, 'serverCommand');
  const explicit =
    Array.isArray(raw) && raw.length > 0 && raw.every((part) => typeof part === 'string')
      ? raw.map(fill)
      : undefined;
  const extra: Record<string, string> = {};
  const rawEnv = settings.get<unknown>('env');
  if (typeof rawEnv === 'object' && rawEnv !== null) {
    for (const [key, value] of Object.entries(rawEnv)) {
      if (typeof value === 'string') {
        extra[key] = fill(value);
      }
    }
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined) {
      env[key] = value;
    }
  }
  Object.assign(env, extra);
  const located = locateServer({
    explicit,
    pathEnv: lookup(env, 'PATH'),
    pathExt: lookup(env, 'PATHEXT'),
    folders,
    platform: process.platform,
    trusted: vscode.workspace.isTrusted,
    isExecutable,
  });
  if (!located.found) {
    throw new ServerMissing(located.message);
  }
  return { command: located.command, args: located.args, env, cwd: folder, how: located.how };
}

/** An environment variable; on Windows its name in any case (`Path`). */
function lookup(env: Record<string, string>, name: string): string | undefined {
  if (process.platform !== 'win32') {
    return env[name];
  }
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The server's settings layer (`{"provider": {...}, "turn": {...}, ...}`) as set now; with
 * the API key from `secrets` when given.
 */
export async function serverSettings(secrets?: vscode.SecretStorage): Promise<Layer> {
  const settings = vscode.workspace.getConfiguration(SECTION);
  const apiKey = await secrets?.get(API_KEY_SECRET);
  return serverLayer((key) => explicitValue(settings, key), apiKey);
}

/** Whether a settings change means the server must be started again. */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
  return (
    event.affectsConfiguration(`${SECTION}.serverCommand`) ||
    event.affectsConfiguration(`${SECTION}.env`)
  );
}

/** Whether a settings change concerns the server's own settings (sent, no restart). */
export function affectsSettings(event: vscode.ConfigurationChangeEvent): boolean {
  return SETTINGS.some((spec) => event.affectsConfiguration(`${SECTION}.${spec.setting}`));
}
