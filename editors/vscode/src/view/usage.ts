/**
 * What the model has cost, per session, from `tether/update` kind `usage` (sent after
 * each provider request) on top of what `tether.history` said the session had cost
 * before: the status bar shows how full the model's window is and the session's tokens.
 */

import type { Stats, UsageUpdate } from './protocol';

export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  requests: number;
  /** The context of the latest request, and the model's window (when the server knows it). */
  contextTokens?: number;
  contextWindow?: number;
}

export class UsageBook {
  private readonly sessions = new Map<string, SessionUsage>();
  private latest: string | undefined;

  /** The session's totals as `tether.history` gives them (they include every update so far). */
  seed(session: string, stats: Pick<Stats, 'input_tokens' | 'output_tokens' | 'requests'>): void {
    const known = this.sessions.get(session);
    this.sessions.set(session, {
      ...known,
      inputTokens: stats.input_tokens,
      outputTokens: stats.output_tokens,
      requests: stats.requests,
    });
  }

  apply(update: UsageUpdate): void {
    const known = this.sessions.get(update.session) ?? { inputTokens: 0, outputTokens: 0, requests: 0 };
    const next: SessionUsage = {
      inputTokens: known.inputTokens + update.input_tokens,
      outputTokens: known.outputTokens + update.output_tokens,
      requests: known.requests + 1,
      contextTokens: update.context_tokens,
    };
    const window = update.context_window ?? known.contextWindow;
    if (typeof window === 'number' && window > 0) {
      next.contextWindow = window;
    }
    this.sessions.set(update.session, next);
    this.latest = update.session;
  }

  get(session: string | null | undefined): SessionUsage | undefined {
    return session ? this.sessions.get(session) : undefined;
  }

  /** The session to show: the one given when it has usage, else the one that last reported. */
  shown(session: string | null | undefined): SessionUsage | undefined {
    return this.get(session) ?? this.get(this.latest);
  }
}

/** 1234 as 1.2k, 128000 as 128k, 1500000 as 1.5M. */
export function compact(n: number): string {
  if (n < 1000) {
    return String(Math.round(n));
  }
  const [value, unit] = n < 1_000_000 ? [n / 1000, 'k'] : [n / 1_000_000, 'M'];
  const digits = value < 10 ? 1 : 0;
  return `${Number(value.toFixed(digits))}${unit}`;
}

/** The status bar's words for a session's usage, and the tooltip that spells them out. */
export function describeUsage(usage: SessionUsage): { text: string; tooltip: string } {
  const total = usage.inputTokens + usage.outputTokens;
  const parts: string[] = [];
  const lines: string[] = [];
  if (usage.contextTokens !== undefined) {
    if (usage.contextWindow !== undefined) {
      const share = Math.round((100 * usage.contextTokens) / usage.contextWindow);
      parts.push(`ctx ${compact(usage.contextTokens)}/${compact(usage.contextWindow)} (${share}%)`);
      lines.push(
        `Context: ${usage.contextTokens.toLocaleString('en-US')} of the model's ` +
          `${usage.contextWindow.toLocaleString('en-US')} tokens (${share}%)`,
      );
    } else {
      parts.push(`ctx ${compact(usage.contextTokens)}`);
      lines.push(`Context: ${usage.contextTokens.toLocaleString('en-US')} tokens`);
    }
  }
  parts.push(`${compact(total)} tok`);
  lines.push(
    `This session: ${usage.inputTokens.toLocaleString('en-US')} in + ` +
      `${usage.outputTokens.toLocaleString('en-US')} out = ${total.toLocaleString('en-US')} tokens ` +
      `in ${usage.requests} request${usage.requests === 1 ? '' : 's'}`,
  );
  return { text: parts.join(' · '), tooltip: lines.join('\n') };
}
