/**
 * The text a pending `patch` call would leave, computed the way the server plans
 * it (tools/patch.py, tools/textedits.py): every `old` found exactly once in the
 * current text, edits never seeing each other's results; or the whole `content`.
 */

export interface PatchArguments {
  path: string;
  edits?: { old: string; new: string }[];
  content?: string;
}

export type Proposed = { ok: true; text: string } | { ok: false; error: string };

export function patchArguments(raw: unknown): PatchArguments | undefined {
  if (typeof raw !== 'object' || raw === null) {
    return undefined;
  }
  const args = raw as Record<string, unknown>;
  if (typeof args.path !== 'string' || args.path === '') {
    return undefined;
  }
  if (typeof args.content === 'string') {
    return { path: args.path, content: args.content };
  }
  if (!Array.isArray(args.edits)) {
    return undefined;
  }
  const edits: { old: string; new: string }[] = [];
  for (const edit of args.edits as unknown[]) {
    const e = edit as Record<string, unknown> | null;
    if (e === null || typeof e.old !== 'string' || typeof e.new !== 'string') {
      return undefined;
    }
    edits.push({ old: e.old, new: e.new });
  }
  return { path: args.path, edits };
}

export function proposedText(current: string | undefined, args: PatchArguments): Proposed {
  if (args.content !== undefined) {
    return { ok: true, text: args.content };
  }
  if (current === undefined) {
    return { ok: false, error: `no such file: ${args.path}` };
  }
  const crlf = current.includes('\r\n');
  const spans: { start: number; end: number; text: string }[] = [];
  for (const [index, edit] of (args.edits ?? []).entries()) {
    let { old, new: replacement } = edit;
    let found = occurrences(current, old);
    if (found.length === 0 && crlf && !old.includes('\r')) {
      old = old.replace(/\n/g, '\r\n');
      replacement = replacement.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n');
      found = occurrences(current, old);
    }
    const [start, twice] = found;
    if (start === undefined || twice !== undefined) {
      const how = start === undefined ? 'not found' : 'found more than once';
      return { ok: false, error: `edit ${index + 1}: \`old\` ${how} in ${args.path}` };
    }
    spans.push({ start, end: start + old.length, text: replacement });
  }
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start < at) {
      return { ok: false, error: `edits overlap in ${args.path}` };
    }
    out += current.slice(at, span.start) + span.text;
    at = span.end;
  }
  return { ok: true, text: out + current.slice(at) };
}

function occurrences(text: string, old: string): number[] {
  const found: number[] = [];
  if (old === '') {
    return found;
  }
  let at = text.indexOf(old);
  while (at >= 0 && found.length < 2) {
    found.push(at);
    at = text.indexOf(old, at + 1);
  }
  return found;
}
