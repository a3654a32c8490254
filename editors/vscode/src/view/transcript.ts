/**
 * One session's transcript as the chat view shows it, built from `tether/update`
 * notifications as they arrive, from a turn's result, or from `tether.history`.
 * Each change returns the entries it touched, so the view redraws only those.
 */

import type {
  Answer,
  Entry,
  History,
  PendingCall,
  Rewound,
  Tone,
  ToolEntry,
  TurnResult,
  Update,
  ViewStatus,
} from './protocol';
import { describeRewound } from './rewind';

/** A result longer than this is kept as its head and its tail (the server sends at most 4,000). */
const RESULT_HEAD = 6_000;
const RESULT_TAIL = 2_000;
/** The most of a command's live output a card keeps: its tail. */
export const OUTPUT_KEEP = 100_000;

export class Transcript {
  readonly entries: Entry[] = [];
  status: ViewStatus = 'idle';
  private serial = 0;
  private readonly started = new Map<string, number>();
  /** Index of the entry where the current turn began (its user prompt). */
  private turnStart = 0;

  constructor(
    public session: string | null = null,
    private readonly now: () => number = Date.now,
  ) {}

  tool(callId: string): ToolEntry | undefined {
    return this.entries.find((e): e is ToolEntry => e.kind === 'tool' && e.id === callId);
  }

  /** Calls that wait for the person. */
  pending(): ToolEntry[] {
    return this.entries.filter(
      (e): e is ToolEntry => e.kind === 'tool' && e.approval === 'pending',
    );
  }

  user(text: string): Entry[] {
    this.turnStart = this.entries.length;
    return [this.add({ kind: 'user', id: this.id('u'), text })];
  }

  notice(text: string, tone: Tone = 'info'): Entry[] {
    return [this.add({ kind: 'notice', id: this.id('n'), text, tone })];
  }

  /** Folds one update of this session in; returns the entries it changed. */
  apply(update: Update): Entry[] {
    switch (update.kind) {
      case 'text':
        return [this.appendText(update.text)];
      case 'tool_call': {
        this.started.set(update.call_id, this.now());
        const existing = this.tool(update.call_id);
        const entry: ToolEntry = existing ?? {
          kind: 'tool',
          id: update.call_id,
          session: update.session,
          tool: update.tool,
          summary: update.summary,
          arguments: update.arguments,
          state: 'running',
        };
        return [existing ?? this.add(entry)];
      }
      case 'approval': {
        const entry = this.ensureTool(update.session, update.call_id, update.tool, update.summary);
        if (update.decision === 'pending') {
          entry.approval = 'pending';
          entry.state = 'waiting';
          this.started.delete(update.call_id);
        } else if (update.decision === 'allowed') {
          delete entry.offers;
          entry.approval = 'allowed';
          entry.state = 'running';
          this.started.set(update.call_id, this.now()); // it runs from now
        } else {
          delete entry.offers;
          entry.approval = 'denied';
        }
        return [entry];
      }
      case 'tool_result': {
        const entry = this.ensureTool(update.session, update.call_id, update.tool, update.tool);
        entry.state = update.status;
        entry.result = preview(update.content);
        const started = this.started.get(update.call_id);
        const ran = update.status !== 'not_executed' && update.status !== 'denied';
        if (started !== undefined && ran) {
          entry.durationMs = Math.max(0, this.now() - started);
        }
        if (entry.approval === 'pending' || entry.approval === 'deciding') {
          entry.approval = update.status === 'denied' ? 'denied' : 'allowed';
        }
        delete entry.offers;
        this.started.delete(update.call_id);
        return [entry];
      }
      case 'output': {
        const known = this.tool(update.call_id);
        const entry = known ?? this.ensureTool(update.session, update.call_id, 'command', '');
        entry.output = keepTail((entry.output ?? '') + update.text, OUTPUT_KEEP);
        return known === undefined ? [entry] : []; // a known card gets the delta alone
      }
      case 'usage':
        return [];
      case 'rewind':
        return this.rewound(update);
      case 'status': {
        if (update.result) {
          // The turn's end (`wait: false`): drawn from its result, like a result that came back.
          const result = update.result;
          const error = result.error ?? (update.detail || undefined);
          return this.finish(error === undefined ? result : { ...result, error });
        }
        this.status = toViewStatus(update.status);
        if (update.status === 'error' && update.detail) {
          return this.notice(update.detail, 'error');
        }
        return [];
      }
    }
  }

  /** A rewind, as an entry of the transcript; what it left as it is, as a warning. */
  rewound(result: Rewound): Entry[] {
    const { text, warning } = describeRewound(result);
    return [...this.notice(text), ...(warning === undefined ? [] : this.notice(warning, 'warning'))];
  }

  /**
   * Numbers the prompts by the server's turns and marks those whose turn changed files
   * (they offer Rewind). The history's prompts are matched to the shown ones from the
   * newest back, so a prompt shown but never stored (a turn that could not start) only
   * leaves older ones unmarked.
   */
  turns(history: History): Entry[] {
    const files = new Map(history.checkpoints.map((c) => [c.turn, c.files]));
    const stored = history.messages
      .flatMap((m) => (m.role === 'user' && typeof m.turn === 'number' ? [m.turn] : []))
      .reverse();
    const shown = this.entries.filter((e) => e.kind === 'user').reverse();
    const changed: Entry[] = [];
    for (const [i, entry] of shown.entries()) {
      const turn = stored[i];
      if (turn === undefined) {
        break;
      }
      const touched = files.get(turn);
      if (entry.turn !== turn || entry.files?.length !== touched?.length) {
        entry.turn = turn;
        if (touched === undefined) {
          delete entry.files;
        } else {
          entry.files = touched;
        }
        changed.push(entry);
      }
    }
    return changed;
  }

  /** A turn's final result: fills in what the updates may have missed. */
  finish(result: TurnResult): Entry[] {
    this.session ??= result.session;
    this.status = result.status;
    const changed: Entry[] = [];
    const answered = this.entries
      .slice(this.turnStart)
      .some((e) => e.kind === 'assistant' && e.text !== '');
    if (result.status === 'done' && result.answer && !answered) {
      changed.push(this.add({ kind: 'assistant', id: this.id('a'), text: result.answer }));
    }
    for (const call of result.pending ?? []) {
      changed.push(this.markPending(result.session, call));
    }
    if (result.status === 'error') {
      const already = this.entries.some((e) => e.kind === 'notice' && e.text === result.error);
      if (!already) {
        changed.push(...this.notice(result.error ?? 'the turn failed', 'error'));
      }
    } else if (result.status === 'stopped' || result.status === 'cancelled') {
      changed.push(...this.notice(`turn ${result.status}`));
    }
    return changed;
  }

  /**
   * The server's dialog about a call opened (what it offers, what it warns of) or closed
   * (undefined): the card offers the same answers and shows the same warning.
   */
  dialog(callId: string, offers: Answer[] | undefined, note?: string): Entry[] {
    const entry = this.tool(callId);
    if (entry === undefined) {
      return [];
    }
    if (offers === undefined) {
      delete entry.offers;
    } else {
      entry.offers = offers;
    }
    if (note !== undefined) {
      entry.note = note;
    }
    return [entry];
  }

  /** The person answered a card: its buttons go away until the server confirms. */
  deciding(callId: string): Entry[] {
    const entry = this.tool(callId);
    if (entry === undefined || entry.approval !== 'pending') {
      return [];
    }
    entry.approval = 'deciding';
    return [entry];
  }

  /** Undo `deciding` when the decision could not be delivered. */
  undecided(callId: string): Entry[] {
    const entry = this.tool(callId);
    if (entry === undefined || entry.approval !== 'deciding') {
      return [];
    }
    entry.approval = 'pending';
    return [entry];
  }

  /** A transcript rebuilt from `tether.history`. */
  static fromHistory(session: string, history: History, now?: () => number): Transcript {
    const t = new Transcript(session, now);
    const compacted = new Set(history.compactions.map((c) => c.before));
    const rewinds = (index: number): void => {
      for (const rewind of history.rewinds.filter((r) => r.before === index)) {
        t.rewound(rewind);
      }
    };
    for (const [index, message] of history.messages.entries()) {
      rewinds(index);
      if (compacted.has(index)) {
        t.notice('The context was compacted here: the model sees what is above as a summary.');
      }
      if (message.role === 'user') {
        t.user(message.content);
      } else if (message.role === 'assistant') {
        if (message.content) {
          t.add({ kind: 'assistant', id: t.id('a'), text: message.content });
        }
        for (const call of message.tool_calls ?? []) {
          t.add({
            kind: 'tool',
            id: call.id,
            session,
            tool: call.name,
            summary: describe(parseArguments(call.arguments)),
            arguments: parseArguments(call.arguments),
            state: 'unanswered',
          });
        }
      } else {
        const entry = t.ensureTool(session, message.call_id, message.tool, '');
        entry.state = message.status;
        entry.result = preview(message.content);
        const span = spanMs(message.started_at, message.ended_at);
        if (span !== undefined) {
          entry.durationMs = span;
        }
      }
    }
    rewinds(history.messages.length);
    for (const rewind of history.rewinds.filter((r) => r.before > history.messages.length)) {
      t.rewound(rewind);
    }
    t.turns(history);
    for (const call of history.pending) {
      t.markPending(session, call);
    }
    t.status = history.pending.length > 0 ? 'awaiting_approval' : 'idle';
    return t;
  }

  private markPending(session: string, call: PendingCall): ToolEntry {
    const entry = this.ensureTool(session, call.call_id, call.tool, call.summary);
    entry.summary = call.summary;
    entry.arguments = call.arguments;
    entry.state = 'waiting';
    entry.approval = 'pending';
    return entry;
  }

  private ensureTool(session: string, callId: string, tool: string, summary: string): ToolEntry {
    const existing = this.tool(callId);
    if (existing !== undefined) {
      if (summary && existing.summary === existing.tool) {
        existing.summary = summary;
      }
      return existing;
    }
    const entry: ToolEntry = {
      kind: 'tool',
      id: callId,
      session,
      tool,
      summary: summary || tool,
      arguments: {},
      state: 'running',
    };
    this.add(entry);
    return entry;
  }

  private appendText(text: string): Entry {
    const last = this.entries[this.entries.length - 1];
    if (last !== undefined && last.kind === 'assistant') {
      last.text += text;
      return last;
    }
    return this.add({ kind: 'assistant', id: this.id('a'), text });
  }

  private add<E extends Entry>(entry: E): E {
    this.entries.push(entry);
    return entry;
  }

  private id(prefix: string): string {
    this.serial += 1;
    return `${prefix}${this.serial}`;
  }
}

function toViewStatus(status: string): ViewStatus {
  switch (status) {
    case 'running':
    case 'awaiting_approval':
    case 'done':
    case 'cancelled':
    case 'stopped':
    case 'error':
      return status;
    default:
      return 'idle';
  }
}

function parseArguments(raw: unknown): Record<string, unknown> | string {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    return raw as Record<string, unknown>;
  }
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
    } catch {
      // not JSON: shown as it came
    }
    return raw;
  }
  return {};
}

/** What a call is about, for calls known only from history (which keeps no summary). */
export function describe(args: Record<string, unknown> | string): string {
  if (typeof args === 'string') {
    return args.slice(0, 80);
  }
  for (const key of ['command', 'path', 'pattern']) {
    const value = args[key];
    if (typeof value === 'string' && value !== '') {
      return value;
    }
  }
  return '';
}

function spanMs(start?: string | null, end?: string | null): number | undefined {
  if (!start || !end) {
    return undefined;
  }
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

function preview(content: string): string {
  if (content.length <= RESULT_HEAD + RESULT_TAIL) {
    return content;
  }
  const cut = content.length - RESULT_HEAD - RESULT_TAIL;
  return `${content.slice(0, RESULT_HEAD)}\n… (${cut} characters) …\n${content.slice(-RESULT_TAIL)}`;
}

/** The last `keep` characters of `text`, from a line start when one is near. */
export function keepTail(text: string, keep: number): string {
  if (text.length <= keep) {
    return text;
  }
  const tail = text.slice(-keep);
  const newline = tail.indexOf('\n');
  return newline >= 0 && newline < 200 ? tail.slice(newline + 1) : tail;
}
