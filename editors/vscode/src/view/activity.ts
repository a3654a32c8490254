/**
 * What the status bar shows across every session of this window: awaiting
 * approval while any call waits for the person, running while any turn runs,
 * idle otherwise. Fed by `tether/update` and by the dialogs' and turns' ends.
 */

import type { Update } from './protocol';

export type Activity = 'idle' | 'running' | 'awaiting';

export class ActivityTracker {
  private readonly running = new Set<string>();
  private readonly parked = new Set<string>();
  private readonly waiting = new Map<string, Set<string>>(); // session -> call ids

  apply(update: Update): void {
    const session = update.session;
    if (update.kind === 'status') {
      this.running.delete(session);
      this.parked.delete(session);
      if (update.status === 'running') {
        this.running.add(session);
      } else if (update.status === 'awaiting_approval') {
        this.parked.add(session);
      }
      if (update.status !== 'running') {
        this.waiting.delete(session);
      }
    } else if (update.kind === 'approval') {
      const calls = this.waiting.get(session) ?? new Set<string>();
      if (update.decision === 'pending') {
        calls.add(update.call_id);
      } else {
        calls.delete(update.call_id);
      }
      this.waiting.set(session, calls);
    } else if (update.kind === 'tool_result') {
      this.waiting.get(session)?.delete(update.call_id);
    }
  }

  /** A session known (from `tether.sessions` or a result) to be parked or not. */
  parkedSession(session: string, parked: boolean): void {
    if (parked) {
      this.parked.add(session);
    } else {
      this.parked.delete(session);
    }
  }

  /** Sessions with calls waiting for the person. */
  awaitingSessions(): string[] {
    const sessions = new Set(this.parked);
    for (const [session, calls] of this.waiting) {
      if (calls.size > 0) {
        sessions.add(session);
      }
    }
    return [...sessions];
  }

  get state(): Activity {
    if (this.awaitingSessions().length > 0) {
      return 'awaiting';
    }
    return this.running.size > 0 ? 'running' : 'idle';
  }
}
