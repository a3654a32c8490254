/**
 * *tether: Check Sandbox and Setup*: runs `tether doctor --workspace <folder>` with the
 * program, environment and settings `tether serve` gets, prints its lines to the output
 * "tether" (shown), and sums them up in a notification (view/doctor.ts decides what they come to).
 */

import { execFile } from 'node:child_process';
import * as vscode from 'vscode';

import { ServerMissing, serverLaunch, serverSettings, type ServerLaunch } from './configuration';
import { doctorCommand, summarizeDoctor, type DoctorRun } from './view/doctor';

const TIMEOUT_MS = 15_000;

export async function checkSetup(output: vscode.LogOutputChannel): Promise<void> {
  let launch: ServerLaunch;
  try {
    launch = serverLaunch();
  } catch (error) {
    const message = error instanceof ServerMissing ? error.message : String(error);
    output.error(message);
    void vscode.window.showErrorMessage(message);
    return;
  }
  const { command, args } = doctorCommand(launch, launch.cwd);
  // The settings the server would get, without the API key: the doctor does not need it,
  // and an environment variable is no place for it.
  const layer = await serverSettings();
  const env = { ...launch.env };
  if (Object.keys(layer).length > 0) {
    env.TETHER_ASK_OPTIONS = JSON.stringify(layer);
  }
  output.info(`running ${[command, ...args].join(' ')} (found by ${launch.how})`);
  const run = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'tether: checking the sandbox and setup' },
    () => runDoctor(command, args, env, launch.cwd),
  );
  const summary = summarizeDoctor(run);
  for (const line of summary.lines) {
    output.info(`doctor: ${line}`);
  }
  if (summary.level === 'error' && run.stderr.trim() !== '') {
    output.error(run.stderr.trim());
  }
  output.show(true);
  switch (summary.level) {
    case 'info':
      output.info(summary.message);
      void vscode.window.showInformationMessage(summary.message);
      break;
    case 'warning':
      output.warn(summary.message);
      void vscode.window.showWarningMessage(summary.message);
      break;
    case 'error':
      output.error(summary.message);
      void vscode.window.showErrorMessage(summary.message);
      break;
  }
}

function runDoctor(command: string, args: string[], env: Record<string, string>, cwd: string | undefined): Promise<DoctorRun> {
  return new Promise((resolve) => {
    execFile(command, args, { env, cwd, timeout: TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null) {
        resolve({ code: 0, stdout, stderr });
      } else if (typeof error.code === 'number') {
        resolve({ code: error.code, stdout, stderr });
      } else {
        const failure = error.killed
          ? `it did not finish within ${TIMEOUT_MS / 1000} s`
          : `${command} could not start: ${error.message}`;
        resolve({ code: null, stdout, stderr, failure });
      }
    });
  });
}
