/**
 * Which program is `tether serve`: the person's `tether.serverCommand` when they set it to
 * a program of their own; else `tether` on PATH (where `pipx install` and `uv tool install`
 * put it); else the workspace's `.venv/bin/tether` (`.venv\Scripts\tether.exe` on Windows),
 * in a trusted workspace only, since it is the repository's program. Pure: the file system
 * is asked through `isExecutable`.
 */

import * as path from 'node:path';

export const DEFAULT_COMMAND = ['tether', 'serve'] as const;

export interface LaunchInput {
  /** `tether.serverCommand` as the person set it (undefined: left at its default). */
  explicit: readonly string[] | undefined;
  /** PATH of the environment the server will get. */
  pathEnv: string | undefined;
  /** PATHEXT, on Windows. */
  pathExt?: string | undefined;
  /** The workspace folders, first first. */
  folders: readonly string[];
  platform: NodeJS.Platform;
  /** Whether the workspace is trusted (its own programs may run). */
  trusted: boolean;
  isExecutable(file: string): boolean;
}

export type Located =
  | { found: true; command: string; args: string[]; how: 'setting' | 'path' | 'venv' }
  | { found: false; message: string };

export const INSTALL_ADVICE =
  'Install it with `pipx install /path/to/tether` or `uv tool install /path/to/tether` ' +
  '(a clone of the tether repository; the distribution is tether-lsp, the command tether), ' +
  "or into this workspace's .venv, or set tether.serverCommand to the program's full path.";

export function locateServer(input: LaunchInput): Located {
  const explicit = input.explicit?.filter((part) => typeof part === 'string');
  const [program, ...args] = explicit && explicit.length > 0 ? explicit : DEFAULT_COMMAND;
  if (program !== 'tether') {
    return { found: true, command: program, args, how: 'setting' }; // the person's own program
  }
  const onPath = searchPath(input);
  if (onPath !== undefined) {
    return { found: true, command: onPath, args, how: 'path' };
  }
  if (input.trusted) {
    for (const folder of input.folders) {
      const venv = venvTether(folder, input.platform);
      if (input.isExecutable(venv)) {
        return { found: true, command: venv, args, how: 'venv' };
      }
    }
  }
  const where = input.trusted
    ? "on PATH or in the workspace's .venv"
    : 'on PATH (a .venv of this untrusted workspace is not used)';
  return { found: false, message: `tether: the \`tether\` command was not found ${where}. ${INSTALL_ADVICE}` };
}

export function venvTether(folder: string, platform: NodeJS.Platform): string {
  return platform === 'win32'
    ? path.win32.join(folder, '.venv', 'Scripts', 'tether.exe')
    : path.posix.join(folder, '.venv', 'bin', 'tether');
}

function searchPath(input: LaunchInput): string | undefined {
  const windows = input.platform === 'win32';
  const paths = windows ? path.win32 : path.posix;
  const dirs = (input.pathEnv ?? '').split(windows ? ';' : ':').filter((dir) => dir !== '');
  const extensions = windows
    ? (input.pathExt ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((ext) => ext !== '')
    : [''];
  for (const dir of dirs) {
    for (const ext of extensions) {
      const file = paths.join(dir, `tether${ext.toLowerCase()}`);
      if (input.isExecutable(file)) {
        return file;
      }
    }
  }
  return undefined;
}
