/**
 * `tether doctor`, run on demand (*tether: Check Sandbox and Setup*): the command line
 * from the program that starts `tether serve`, and what its output and exit code come to
 * for a notification. Pure: the running is src/doctor.ts's.
 *
 * The doctor prints one `name: value` line per check and exits 0 when all is well, 1 when
 * something needs the person: the sandbox not used (unless `sandbox.mode = off`), a
 * problem with the settings, no model.
 */

export interface Program {
  command: string;
  args: readonly string[];
}

/** The server's program with `doctor --workspace <folder>` in place of `serve` and what follows it. */
export function doctorCommand(server: Program, folder: string | undefined): { command: string; args: string[] } {
  const serve = server.args.indexOf('serve');
  const before = serve === -1 ? [...server.args] : server.args.slice(0, serve);
  const workspace = folder === undefined ? [] : ['--workspace', folder];
  return { command: server.command, args: [...before, 'doctor', ...workspace] };
}

export interface DoctorRun {
  /** The exit code; null when it did not exit on its own (killed at the time limit). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it could not run or finish (spawn failed, timed out), if so. */
  failure?: string;
}

export interface DoctorSummary {
  level: 'info' | 'warning' | 'error';
  message: string;
  /** The doctor's lines, to show as they are. */
  lines: string[];
}

/** Whether a line of the doctor's needs the person. */
export function needsAttention(line: string): boolean {
  if (line.startsWith('sandbox: NOT USED')) {
    return !line.startsWith('sandbox: NOT USED (sandbox.mode = off)'); // off is their choice
  }
  if (line.startsWith('settings: ')) {
    return line !== 'settings: ok';
  }
  if (line.startsWith('mcp server ')) {
    return line.includes(': FAILED: ') || line.includes(': NO ANSWER'); // started for a moment
  }
  return line.startsWith('provider: ') && line.includes('model none');
}

/** What a doctor's run comes to: info when all is well, a warning naming what needs the person, or an error. */
export function summarizeDoctor(run: DoctorRun): DoctorSummary {
  const lines = run.stdout.split(/\r?\n/).map((line) => line.trimEnd()).filter((line) => line !== '');
  const sandbox = lines.find((line) => line.startsWith('sandbox: '));
  if (run.failure !== undefined || (run.code !== 0 && run.code !== 1) || sandbox === undefined) {
    const said = run.stderr.trim().split(/\r?\n/).pop() ?? '';
    const why = run.failure ?? (said !== '' ? said : `it exited ${String(run.code)} with ${lines[0] ?? 'no output'}`);
    return { level: 'error', message: `tether doctor could not run: ${why}`, lines };
  }
  if (run.code === 0) {
    return { level: 'info', message: `tether doctor: all is well. ${sandbox}`, lines };
  }
  // The sandbox line first, then the others that need the person.
  const attention = [sandbox, ...lines.filter((line) => line !== sandbox && needsAttention(line))];
  return { level: 'warning', message: `tether doctor: ${attention.join(' · ')}`, lines };
}
