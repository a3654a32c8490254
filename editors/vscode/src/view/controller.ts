/**
 * The chat view's behaviour, apart from VS Code: it takes the webview's messages
 * and the server's updates, calls the server through a `Backend`, and posts what
 * the webview should draw. chatView.ts only wires it to a real webview.
 */

import {
  isStarted,
  parseFromView,
  type Answer,
  type Entry,
  type History,
  type Outcome,
  type RewindWhat,
  type Rewound,
  type SessionSummary,
  type ToView,
  type ToolEntry,
  type TurnResult,
  type Update,
  type ViewStatus,
} from './protocol';
import { Transcript } from './transcript';

/**
 * What the view needs of the server and the editor. The turn commands are sent with
 * `"wait": false`: they answer Started at once, and the turn's end arrives as a status
 * update carrying its result; a turn that could not run answers with its result directly.
 */
export interface Backend {
  run(prompt: string, session: string | undefined): Promise<Outcome>;
  /** Answers the call's open dialog (undefined), or tether.approve / tether.deny it. */
  decide(session: string, callId: string, answer: Answer): Promise<Outcome | undefined>;
  /** The same for every call of the session that waits. */
  decideAll(session: string, answer: Answer): Promise<Outcome | undefined>;
  cancel(session: string): Promise<boolean>;
  sessions(): Promise<SessionSummary[]>;
  history(session: string): Promise<History>;
  showDiff(call: ToolEntry): Promise<void>;
  copy(text: string): Promise<void>;
  /** Asks what to take back of a turn (files, conversation, both); undefined: nothing. */
  chooseRewind(turn: number, files: string[]): Promise<RewindWhat | undefined>;
  /** `tether.rewind`. */
  rewind(session: string, turn: number, what: RewindWhat): Promise<Rewound>;
  /** Tells the person what a rewind did (and, as a warning, what it left as it is). */
  rewound(result: Rewound): void;
}

/** Updates kept while a new session's id is not known yet (its `tether.run` is in flight). */
const EARLY_KEEP = 10_000;

export class ChatController {
  private transcript: Transcript;
  /** New sessions being started: updates of unknown sessions wait here for their ids. */
  private starting = 0;
  private early: Update[] = [];
  private sessionList: SessionSummary[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly backend: Backend,
    private readonly post: (message: ToView) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.transcript = new Transcript(null, now);
  }

  get session(): string | null {
    return this.transcript.session;
  }

  get status(): ViewStatus {
    return this.transcript.status;
  }

  /** Calls of the shown session that wait for the person. */
  pending(): ToolEntry[] {
    return this.transcript.pending();
  }

  /** Called whenever the shown session or its status changes. */
  onChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** A message from the webview; anything malformed is dropped. */
  async receive(raw: unknown): Promise<void> {
    const message = parseFromView(raw);
    if (message === undefined) {
      return;
    }
    switch (message.type) {
      case 'ready':
        this.reset();
        await this.refresh();
        return;
      case 'ask':
        await this.ask(message.prompt);
        return;
      case 'decide':
        await this.decide(message.callId, message.answer);
        return;
      case 'diff':
        await this.diff(message.callId);
        return;
      case 'stop':
        await this.stop();
        return;
      case 'open':
        await this.open(message.session);
        return;
      case 'refresh':
        await this.refresh();
        return;
      case 'copy':
        await this.backend.copy(message.text);
        return;
      case 'rewind':
        await this.rewind(message.turn);
        return;
    }
  }

  /** A `tether/update` from the server. */
  update(update: Update): void {
    const t = this.transcript;
    if (update.session !== t.session) {
      if (this.starting > 0 && this.early.length < EARLY_KEEP) {
        this.early.push(update); // perhaps the session this view is starting
      }
      if (update.kind === 'status' && update.result) {
        void this.refresh(); // another session's turn ended: the picker shows its status
      }
      return;
    }
    const changed = t.apply(update);
    if (update.kind === 'output' && changed.length === 0) {
      // A card on screen gets the delta alone; a new one was drawn with its output.
      this.post({ type: 'output', callId: update.call_id, text: update.text });
    }
    this.show(changed);
    if (update.kind === 'status') {
      this.postStatus();
      if (update.result) {
        void this.numberTurns(t); // the turn may have changed files: its prompt offers Rewind
        void this.refresh();
      }
    }
  }

  /** Sends a prompt in the shown session (a new one when none is shown). */
  async ask(prompt: string): Promise<void> {
    const t = this.transcript;
    if (t.status === 'running') {
      // One turn per session: the server would refuse it, and this turn runs on.
      this.show(t.notice('A turn is running in this session: wait for it to end, or stop it, then ask again.'));
      return;
    }
    this.show(t.user(prompt));
    t.status = 'running';
    this.postStatus();
    const fresh = t.session === null;
    if (fresh) {
      this.starting += 1;
    }
    try {
      const outcome = await this.backend.run(prompt, t.session ?? undefined);
      if (fresh) {
        this.adopt(t, outcome.session);
      }
      if (!isStarted(outcome)) {
        this.finish(t, outcome); // it never ran (an unconfigured provider, say)
      }
    } catch (error) {
      this.fail(t, 'tether.run', error);
    } finally {
      if (fresh) {
        this.starting -= 1;
        if (this.starting === 0) {
          this.early = [];
        }
      }
    }
    await this.refresh();
  }

  /** The person's answer to a call, from its card or a command. */
  async decide(callId: string, answer: Answer): Promise<void> {
    const t = this.transcript;
    const entry = t.tool(callId);
    if (entry === undefined || entry.approval !== 'pending') {
      return;
    }
    this.show(t.deciding(callId));
    try {
      const outcome = await this.backend.decide(entry.session, callId, answer);
      this.resumed(t, outcome);
    } catch (error) {
      if (t === this.transcript) {
        this.show(t.undecided(callId));
      }
      this.fail(t, answer === 'deny' ? 'tether.deny' : 'tether.approve', error);
    }
    await this.refresh();
  }

  /** The server's dialog about a call opened (its offered answers) or closed (undefined). */
  dialog(callId: string, offers: Answer[] | undefined, note?: string): void {
    this.show(this.transcript.dialog(callId, offers, note));
  }

  /** The server stopped: a turn it was running will not report its end. */
  serverLost(): void {
    const t = this.transcript;
    if (t.status === 'running') {
      t.status = 'idle';
      this.show(t.notice('The tether server stopped; the turn did not finish.', 'error'));
      this.postStatus();
    }
  }

  /** The person's answer to every waiting call of the shown session (a command). */
  async decideAll(answer: Answer): Promise<void> {
    const t = this.transcript;
    const waiting = t.pending();
    if (t.session === null || waiting.length === 0) {
      return;
    }
    this.show(waiting.flatMap((call) => t.deciding(call.id)));
    try {
      this.resumed(t, await this.backend.decideAll(t.session, answer));
    } catch (error) {
      if (t === this.transcript) {
        this.show(waiting.flatMap((call) => t.undecided(call.id)));
      }
      this.fail(t, answer === 'deny' ? 'tether.deny' : 'tether.approve', error);
    }
    await this.refresh();
  }

  async stop(): Promise<void> {
    const session = this.transcript.session;
    if (session === null) {
      return;
    }
    try {
      await this.backend.cancel(session);
    } catch (error) {
      this.fail(this.transcript, 'tether.cancel', error);
    }
  }

  /**
   * Takes a turn of the shown session back: asks what (unless told), calls `tether.rewind`
   * and reports the answer; the transcript shows the rewind from its update.
   */
  async rewind(turn: number, what?: RewindWhat): Promise<void> {
    const t = this.transcript;
    if (t.session === null) {
      return;
    }
    const prompt = t.entries.find((e) => e.kind === 'user' && e.turn === turn);
    const files = prompt?.kind === 'user' ? (prompt.files ?? []) : [];
    const chosen = what ?? (await this.backend.chooseRewind(turn, files));
    if (chosen === undefined) {
      return;
    }
    try {
      this.backend.rewound(await this.backend.rewind(t.session, turn, chosen));
    } catch (error) {
      if (t === this.transcript) {
        this.show(t.notice(failure('Rewind', error), 'error')); // a turn that runs runs on
      }
      return;
    }
    await this.numberTurns(t);
  }

  /** Shows an earlier session from `tether.history`, or a new empty one (null). */
  async open(session: string | null): Promise<void> {
    if (session === this.transcript.session) {
      return;
    }
    if (session === null) {
      this.transcript = new Transcript(null, this.now);
    } else {
      try {
        const history = await this.backend.history(session);
        this.transcript = Transcript.fromHistory(session, history, this.now);
      } catch (error) {
        this.fail(this.transcript, 'tether.history', error);
        return;
      }
    }
    this.reset();
    this.postSessions();
  }

  async refresh(): Promise<void> {
    try {
      this.sessionList = await this.backend.sessions();
    } catch {
      return; // the server is not up yet: the list stays as it was
    }
    this.postSessions();
  }

  private async diff(callId: string): Promise<void> {
    const entry = this.transcript.tool(callId);
    if (entry === undefined) {
      return;
    }
    try {
      await this.backend.showDiff(entry);
    } catch (error) {
      this.show(this.transcript.notice(failure('Show diff', error), 'error')); // the turn runs on
    }
  }

  /** Numbers `t`'s prompts by the server's turns, marking those that changed files. */
  private async numberTurns(t: Transcript): Promise<void> {
    if (t.session === null) {
      return;
    }
    let history: History;
    try {
      history = await this.backend.history(t.session);
    } catch {
      return; // the prompts stay as they are: Rewind is still a command away
    }
    if (t === this.transcript) {
      this.show(t.turns(history));
    }
  }

  /** The new session `t` started is `session`: what it already said is shown now. */
  private adopt(t: Transcript, session: string): void {
    t.session ??= session;
    const early = this.early.filter((u) => u.session === session);
    this.early = this.early.filter((u) => u.session !== session);
    if (t === this.transcript) {
      this.changed(); // the shown session is known now
      for (const update of early) {
        this.update(update);
      }
    }
  }

  /** A decision's answer: a parked turn that resumed ends with an update; one that could not. */
  private resumed(t: Transcript, outcome: Outcome | undefined): void {
    if (outcome !== undefined && !isStarted(outcome)) {
      this.finish(t, outcome);
    }
  }

  private finish(t: Transcript, result: TurnResult): void {
    if (t !== this.transcript) {
      return; // the person has moved to another session meanwhile
    }
    this.show(t.finish(result));
    this.postStatus();
  }

  private fail(t: Transcript, what: string, error: unknown): void {
    const changed = t.notice(failure(what, error), 'error');
    if (t === this.transcript) {
      if (t.status === 'running') {
        t.status = 'idle';
      }
      this.show(changed);
      this.postStatus();
    }
  }

  private show(entries: Entry[]): void {
    if (entries.length > 0) {
      this.post({ type: 'entries', entries });
    }
  }

  private reset(): void {
    const t = this.transcript;
    this.post({ type: 'reset', session: t.session, status: t.status, entries: t.entries });
    this.changed();
  }

  private postStatus(): void {
    this.post({ type: 'status', session: this.transcript.session, status: this.transcript.status });
    this.changed();
  }

  private postSessions(): void {
    this.post({ type: 'sessions', current: this.transcript.session, sessions: this.sessionList });
  }

  private changed(): void {
    for (const listener of this.listeners) {
      listener();
    }
  }
}

function failure(what: string, error: unknown): string {
  return `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
}
