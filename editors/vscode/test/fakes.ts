/** A scripted Backend that records what the controller asked of it. */

import type { Backend } from '../src/view/controller';
import type {
  Answer,
  History,
  Outcome,
  RewindWhat,
  Rewound,
  SessionSummary,
  ToView,
  ToolEntry,
} from '../src/view/protocol';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export class FakeBackend implements Backend {
  readonly calls: unknown[][] = [];
  runResult = deferred<Outcome>();
  decideResult: Promise<Outcome | undefined> = Promise.resolve(undefined);
  sessionList: SessionSummary[] = [];
  histories = new Map<string, History>();

  run(prompt: string, session: string | undefined): Promise<Outcome> {
    this.calls.push(['run', prompt, session]);
    return this.runResult.promise;
  }

  decide(session: string, callId: string, answer: Answer): Promise<Outcome | undefined> {
    this.calls.push(['decide', session, callId, answer]);
    return this.decideResult;
  }

  decideAll(session: string, answer: Answer): Promise<Outcome | undefined> {
    this.calls.push(['decideAll', session, answer]);
    return this.decideResult;
  }

  cancel(session: string): Promise<boolean> {
    this.calls.push(['cancel', session]);
    return Promise.resolve(true);
  }

  sessions(): Promise<SessionSummary[]> {
    this.calls.push(['sessions']);
    return Promise.resolve(this.sessionList);
  }

  history(session: string): Promise<History> {
    this.calls.push(['history', session]);
    const history = this.histories.get(session);
    return history ? Promise.resolve(history) : Promise.reject(new Error(`unknown session ${session}`));
  }

  diffResult: Promise<void> = Promise.resolve();

  showDiff(call: ToolEntry): Promise<void> {
    this.calls.push(['showDiff', call.id]);
    return this.diffResult;
  }

  copy(text: string): Promise<void> {
    this.calls.push(['copy', text]);
    return Promise.resolve();
  }

  /** What chooseRewind answers. */
  rewindWhat: RewindWhat | undefined = 'files';
  rewindResult: Promise<Rewound> | undefined;
  readonly reported: Rewound[] = [];

  chooseRewind(turn: number, files: string[]): Promise<RewindWhat | undefined> {
    this.calls.push(['chooseRewind', turn, files]);
    return Promise.resolve(this.rewindWhat);
  }

  rewind(session: string, turn: number, what: RewindWhat): Promise<Rewound> {
    this.calls.push(['rewind', session, turn, what]);
    const empty = { restored: [], removed: [], conflicts: [], notes: [] };
    return this.rewindResult ?? Promise.resolve({ session, turn, what, ...empty });
  }

  rewound(result: Rewound): void {
    this.reported.push(result);
  }
}

/** What the webview was sent, with helpers to read it. */
export class Posted {
  readonly messages: ToView[] = [];
  /** Copied as it is posted, as a webview's postMessage does. */
  readonly post = (message: ToView): void => {
    this.messages.push(structuredClone(message));
  };

  /** The last version of each entry sent, in first-seen order. */
  entries(): Map<string, unknown> {
    const seen = new Map<string, unknown>();
    for (const message of this.messages) {
      if (message.type === 'reset') {
        seen.clear();
      }
      if (message.type === 'reset' || message.type === 'entries') {
        for (const entry of message.entries) {
          seen.set(entry.id, entry);
        }
      }
    }
    return seen;
  }

  /** The `output` deltas sent for a call, joined. */
  output(callId: string): string {
    return this.messages
      .filter((m) => m.type === 'output' && m.callId === callId)
      .map((m) => (m.type === 'output' ? m.text : ''))
      .join('');
  }

  lastStatus(): string | undefined {
    const statuses = this.messages.filter((m) => m.type === 'status' || m.type === 'reset');
    const last = statuses[statuses.length - 1];
    return last?.status;
  }
}

/** Lets pending promise callbacks run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Asserts that `actual` has every field of `expected` (recursively; arrays item by item). */
export function like(actual: unknown, expected: unknown, path = '$'): void {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      throw new Error(`${path}: expected ${expected.length} items, got ${JSON.stringify(actual)}`);
    }
    expected.forEach((item, i) => {
      like(actual[i], item, `${path}[${i}]`);
    });
    return;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null) {
      throw new Error(`${path}: expected an object, got ${JSON.stringify(actual)}`);
    }
    for (const [key, value] of Object.entries(expected)) {
      like((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
    return;
  }
  if (!Object.is(actual, expected)) {
    throw new Error(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}
