/**
 * The shapes that cross the two boundaries of the chat view: what the server
 * sends (the editor contract's TurnResult, PendingCall, History and the
 * `tether/update` notification) and the messages between the extension and its
 * webview. Pure: no `vscode` import, so tests and the webview can use it.
 */

// ---- the server (contract version 1) ----

export type TurnStatus = 'done' | 'awaiting_approval' | 'cancelled' | 'stopped' | 'error';
export type ToolStatus = 'ok' | 'error' | 'denied' | 'not_executed' | 'interrupted' | 'cancelled';
export type Answer = 'allow' | 'always' | 'deny';

export interface PendingCall {
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  summary: string;
}

export interface TurnResult {
  session: string;
  status: TurnStatus;
  answer?: string;
  pending?: PendingCall[];
  error?: string;
}

export interface SessionInfo {
  id: string;
  title: string;
  status: string;
  updated: string;
}

export interface HistoryMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: { id: string; name: string; arguments: unknown }[];
  call_id?: string;
  tool?: string;
  status?: ToolStatus;
  started_at?: string | null;
  ended_at?: string | null;
}

export interface History {
  messages: HistoryMessage[];
  pending: PendingCall[];
  stats: { tool_calls: number; tool_time_s: number; tool_time_sum_s: number };
}

export type Update =
  | { kind: 'text'; session: string; text: string }
  | {
      kind: 'tool_call';
      session: string;
      call_id: string;
      tool: string;
      arguments: Record<string, unknown> | string;
      summary: string;
    }
  | {
      kind: 'tool_result';
      session: string;
      call_id: string;
      tool: string;
      status: ToolStatus;
      content: string;
    }
  | {
      kind: 'approval';
      session: string;
      call_id: string;
      tool: string;
      summary: string;
      decision: 'pending' | 'allowed' | 'denied';
    }
  | { kind: 'status'; session: string; status: string; detail?: string | null };

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
  /** The first lines of the result, as the model was shown it. */
  result?: string;
  /** Set while the call waits for the person; `deciding` once they have answered. */
  approval?: 'pending' | 'deciding' | 'allowed' | 'denied';
}

export type Entry =
  | { kind: 'user'; id: string; text: string }
  | { kind: 'assistant'; id: string; text: string }
  | { kind: 'notice'; id: string; text: string; tone: 'info' | 'error' }
  | ToolEntry;

/** What the view shows as the session's state. */
export type ViewStatus = 'idle' | 'running' | 'awaiting_approval' | TurnStatus;

// ---- extension -> webview ----

export type ToView =
  | { type: 'reset'; session: string | null; status: ViewStatus; entries: Entry[] }
  | { type: 'entries'; entries: Entry[] }
  | { type: 'status'; session: string | null; status: ViewStatus }
  | { type: 'sessions'; current: string | null; sessions: SessionInfo[] };

// ---- webview -> extension ----

export type FromView =
  | { type: 'ready' }
  | { type: 'ask'; prompt: string }
  | { type: 'decide'; callId: string; answer: Answer }
  | { type: 'diff'; callId: string }
  | { type: 'stop' }
  | { type: 'open'; session: string | null }
  | { type: 'refresh' };

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
    default:
      return undefined;
  }
}

/** A `tether/update` notification's params, or undefined when they are not one. */
export function parseUpdate(raw: unknown): Update | undefined {
  if (!isRecord(raw) || !nonEmpty(raw.session)) {
    return undefined;
  }
  const hasCall = nonEmpty(raw.call_id) && typeof raw.tool === 'string';
  switch (raw.kind) {
    case 'text':
      return typeof raw.text === 'string' ? (raw as Update) : undefined;
    case 'tool_call':
    case 'tool_result':
    case 'approval':
      return hasCall ? (raw as Update) : undefined;
    case 'status':
      return typeof raw.status === 'string' ? (raw as Update) : undefined;
    default:
      return undefined;
  }
}
