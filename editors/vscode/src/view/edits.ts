/**
 * tether's `workspace/applyEdit`, before and after: which documents it touches and which
 * of them to save once it is applied. A command sees the disk while reads see the
 * buffers, so a document the patch changed is saved right away when it had no unsaved
 * changes of the person's before (contract v2, Approval); one that had is left as it is,
 * and the server names it before a command runs.
 */

import type { WorkspaceEdit } from 'vscode-languageclient';

/** The URIs (as the server wrote them) whose text the edit changes, each once, in order. */
export function editedDocuments(edit: WorkspaceEdit): string[] {
  const uris: string[] = [];
  const add = (uri: string): void => {
    if (!uris.includes(uri)) {
      uris.push(uri);
    }
  };
  for (const change of edit.documentChanges ?? []) {
    if ('textDocument' in change) {
      add(change.textDocument.uri);
    } else if (change.kind === 'create') {
      add(change.uri);
    } else if (change.kind === 'rename') {
      add(change.newUri);
    }
  }
  for (const uri of Object.keys(edit.changes ?? {})) {
    add(uri);
  }
  return uris;
}

/** A document as it stood before the edit: undefined when it was not open. */
export interface Before {
  dirty: boolean;
  scheme: string;
}

/**
 * Whether to save a document the edit changed: a file (not an untitled buffer) that had
 * no unsaved changes before it; a document the edit opened had none.
 */
export function saveAfterEdit(before: Before | undefined, scheme: string): boolean {
  return scheme === 'file' && !(before?.dirty ?? false);
}

/** The versions the edit was made against, by URI (a document edited since is not touched). */
export function editedVersions(edit: WorkspaceEdit): Map<string, number> {
  const versions = new Map<string, number>();
  for (const change of edit.documentChanges ?? []) {
    if ('textDocument' in change && typeof change.textDocument.version === 'number') {
      versions.set(change.textDocument.uri, change.textDocument.version);
    }
  }
  return versions;
}

/** A document as it stood: its version and whether it had unsaved changes. */
export interface Snapshot {
  version: number;
  dirty: boolean;
}

/**
 * Whether to save a document after the person applied tether's *Apply patch* code action
 * (VS Code applies its edit, then runs `tether.applied`): when it had no unsaved changes as
 * the action was offered, and the action's edit (one version) is all that changed since.
 */
export function saveAfterAction(offered: Snapshot, now: Snapshot): boolean {
  return !offered.dirty && now.dirty && now.version === offered.version + 1;
}
