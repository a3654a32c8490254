/**
 * The shapes that cross the two boundaries of the chat view: what the server
 * sends (the editor contract's types, generated into contract.ts from the schema
 * the server generates: `npm run contract`) and the messages between the
 * extension and its webview. Pure: no `vscode` import, so tests and the webview
 * can use it.
 */

import type {
  History,
  HistoryTool,
  RewindArgument,
  SessionSummary,
  Started,
  TurnResult,
  Update,
} from './contract';

// ---- the server: the contract, generated; never copied by hand ----

export type {
  Commands,
  Compaction,
  History,
  OutputUpdate,
  PendingCall,
  Planned,
  RewindUpdate,
  Rewound,
  SessionSummary,
  Started,
  Stats,
  StatusUpdate,
  TurnResult,
  Update,
  UsageUpdate,
} from './contract';

/** A command's answer: the turn's end (`wait` absent, or a turn that never ran), or Started. */
export type Outcome = TurnResult | Started;

export type TurnStatus = TurnResult['status'];
export type ToolStatus = HistoryTool['status'];
export type HistoryMessage = History['messages'][number];
export type RewindWhat = NonNullable<RewindArgument['what']>;

// ---- the transcript the webview renders ----

/** A tool call's state as the view shows it: the server's statuses, plus its own three. */
export type CallState = 'running' | 'waiting' | 'unanswered' | ToolStatus;

export interface ToolEntry {
  kind: 'tool';
  id: string; // the call id
  session: string;
  tool: string;
  summary: string;
  arguments: Record<string, unknown> | string;
  state: CallState;
  /** Milliseconds the call ran, once it has a result and a start. */
  durationMs?: number;
  /** The result, as the model was shown it (long ones as their head and tail). */
  result?: string;
  /** A command's output as it ran (its tail, when long), from `output` updates. */
  output?: string;
  /** Set while the call waits for the person; `deciding` once they have answered. */
  approval?: 'pending' | 'deciding' | 'allowed' | 'denied';
  /** The answers the server's dialog offers for this call, while it is open. */
  offers?: Answer[];
  /** What the dialog warns of beyond the call itself (unsaved documents a command will not see). */
  note?: string;
}

export type Tone = 'info' | 'warning' | 'error';

export type Entry =
  /** A prompt; `turn` once the server's history has numbered it, `files` if the turn changed some. */
  | { kind: 'user'; id: string; text: string; turn?: number; files?: string[] }
  | { kind: 'assistant'; id: string; text: string }
  | { kind: 'notice'; id: string; text: string; tone: Tone }
  | ToolEntry;

/** What the view shows as the session's state. */
export type ViewStatus = 'idle' | 'running' | 'awaiting_approval' | TurnStatus;

// ---- extension -> webview ----

export type ToView =
  | { type: 'reset'; session: string | null; status: ViewStatus; entries: Entry[] }
  | { type: 'entries'; entries: Entry[] }
  /** More output of a running command, appended to its card. */
  | { type: 'output'; callId: string; text: string }
  | { type: 'status'; session: string | null; status: ViewStatus }
  | { type: 'sessions'; current: string | null; sessions: SessionSummary[] };

// ---- webview -> extension ----

/** The person's answer to a call that waits. */
export type Answer = 'allow' | 'always' | 'deny';

export type FromView =
  | { type: 'ready' }
  | { type: 'ask'; prompt: string }
  | { type: 'decide'; callId: string; answer: Answer }
  | { type: 'diff'; callId: string }
  | { type: 'stop' }
  | { type: 'open'; session: string | null }
  | { type: 'refresh' }
  /** Take a turn back (the extension asks what: files, conversation or both). */
  | { type: 'rewind'; turn: number }
  /** A code block's text, for the clipboard. */
  | { type: 'copy'; text: string };

const ANSWERS: readonly string[] = ['allow', 'always', 'deny'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** A message from the webview, checked field by field; anything else is undefined. */
export function parseFromView(raw: unknown): FromView | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  switch (raw.type) {
    case 'ready':
    case 'stop':
    case 'refresh':
      return { type: raw.type };
    case 'ask':
      return nonEmpty(raw.prompt) && raw.prompt.trim() !== ''
        ? { type: 'ask', prompt: raw.prompt }
        : undefined;
    case 'decide':
      return nonEmpty(raw.callId) && typeof raw.answer === 'string' && ANSWERS.includes(raw.answer)
        ? { type: 'decide', callId: raw.callId, answer: raw.answer as Answer }
        : undefined;
    case 'diff':
      return nonEmpty(raw.callId) ? { type: 'diff', callId: raw.callId } : undefined;
    case 'open':
      return raw.session === null || nonEmpty(raw.session)
        ? { type: 'open', session: raw.session }
        : undefined;
    case 'copy':
      return typeof raw.text === 'string' ? { type: 'copy', text: raw.text } : undefined;
    case 'rewind':
      return Number.isSafeInteger(raw.turn) && (raw.turn as number) >= 1
        ? { type: 'rewind', turn: raw.turn as number }
        : undefined;
    default:
      return undefined;
  }
}

const hasCall = (raw: Record<string, unknown>): boolean =>
  nonEmpty(raw.call_id) && typeof raw.tool === 'string';

/** What the view relies on in each kind of update; a kind the contract adds must be named. */
const NEEDS: Record<Update['kind'], (raw: Record<string, unknown>) => boolean> = {
  text: (raw) => typeof raw.text === 'string',
  tool_call: hasCall,
  tool_result: hasCall,
  approval: hasCall,
  status: (raw) => typeof raw.status === 'string' && (raw.result == null || isResult(raw.result)),
  output: (raw) => nonEmpty(raw.call_id) && typeof raw.text === 'string',
  usage: (raw) =>
    ['input_tokens', 'output_tokens', 'context_tokens'].every((k) => typeof raw[k] === 'number'),
  rewind: (raw) =>
    typeof raw.turn === 'number' &&
    typeof raw.what === 'string' &&
    ['restored', 'removed', 'conflicts', 'notes'].every((k) => Array.isArray(raw[k])),
};

function isResult(raw: unknown): boolean {
  return isRecord(raw) && nonEmpty(raw.session) && typeof raw.status === 'string';
}

/** A command's answer: a turn's result, or Started when it runs on (`wait: false`). */
export function parseOutcome(raw: unknown): Outcome {
  if (!isResult(raw)) {
    throw new Error(`the server answered with no session and status: ${JSON.stringify(raw)}`);
  }
  return raw as Outcome;
}

export function isStarted(outcome: Outcome): outcome is Started {
  return outcome.status === 'running';
}

/** A `tether/update` notification's params, or undefined when they are not one. */
export function parseUpdate(raw: unknown): Update | undefined {
  if (!isRecord(raw) || !nonEmpty(raw.session) || typeof raw.kind !== 'string') {
    return undefined;
  }
  const needs = Object.hasOwn(NEEDS, raw.kind) ? NEEDS[raw.kind as Update['kind']] : undefined;
  return needs?.(raw) ? (raw as unknown as Update) : undefined;
}
