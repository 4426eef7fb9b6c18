/**
 * A changed entry in two shapes. fnbox's wire form (what `fnbox call` and `POST /v1/execute` print, and what
 * `fnbox sync` reads) lists it under `files.created|modified|deleted` as `{path, type: 'file' | 'directory'
 * | 'symlink', size, content: text | {base64}}`. The seed's `FileChange`, which the drop-in hands to its
 * users, says what happened in `type` (`'create' | 'modify' | 'delete'`) and carries `content` as a
 * `Uint8Array`, `size` and a `timestamp` (`Date`): seed code tests `change.type === 'create'` and decodes
 * the bytes. The entry's own type goes to `fileType`, which the seed's objects never have.
 */
import type { FileChange, WireFileChange } from '../types.js';

type Json = Record<string, unknown>;
export type Kind = 'created' | 'modified' | 'deleted';

const SEED_TYPE: Record<Kind, FileChange['type']> = { created: 'create', modified: 'modify', deleted: 'delete' };
const SEED_TYPE_NAMES: Record<string, true> = { create: true, modify: true, delete: true };

/** The seed's `type` (and the wire's kind names) as the wire's kind; undefined for anything else. */
const KIND_OF: Record<string, Kind> = {
  create: 'created',
  modify: 'modified',
  delete: 'deleted',
  created: 'created',
  modified: 'modified',
  deleted: 'deleted',
};

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Wire content as bytes: text is UTF-8, `{base64}` decoded. */
function contentBytes(content: unknown): Uint8Array | undefined {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  if (isObject(content) && typeof content.base64 === 'string') {
    const b = Buffer.from(content.base64, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  return undefined;
}

/**
 * The seed's change for a wire change listed under `kind`. `timestamp` is when the result arrived (fnbox
 * does not time each change). A deletion's `size` is 0, as the seed's: the size of what is there now.
 * fnbox's other fields (`mode`, ...) stay.
 */
export function toSeedChange(wire: WireFileChange, kind: Kind, timestamp: Date): FileChange {
  const { path, type, size, content, kind: _kind, ...rest } = wire;
  const out: FileChange = {
    ...rest,
    type: SEED_TYPE[kind],
    path,
    size: kind === 'deleted' ? 0 : typeof size === 'number' ? size : 0,
    timestamp: new Date(timestamp.getTime()),
    fileType: (typeof type === 'string' ? type : 'file') as FileChange['fileType'],
  };
  const bytes = kind === 'deleted' ? undefined : contentBytes(content);
  if (bytes) out.content = bytes;
  return out;
}

/** Replaces each change list of a result's `files` by the seed's changes (in place: `files` is the result's own). */
export function presentFiles(files: Json, timestamp: Date): void {
  for (const kind of ['created', 'modified', 'deleted'] as Kind[]) {
    const list = files[kind];
    if (Array.isArray(list)) files[kind] = list.map((c) => (isObject(c) ? toSeedChange(c as WireFileChange, kind, timestamp) : c));
  }
}

/** Bytes travel as `{base64}` (JSON has no bytes; `JSON.stringify` of a Uint8Array is an object of indices). */
export function encodeContent(value: unknown): unknown {
  if (value instanceof Uint8Array) {
    return { base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') };
  }
  if (value instanceof ArrayBuffer) return { base64: Buffer.from(value).toString('base64') };
  return value;
}

/**
 * A change as `fnbox sync` reads it, from either shape. The seed's (`type: 'create' | 'modify' | 'delete'`,
 * `Uint8Array` content, `fileType` when it came from this package) becomes `kind` plus the entry's `type`;
 * fnbox's passes as it is. Bytes become `{base64}`; the seed's `timestamp` and `oldContent` are dropped.
 */
export function toSyncChange(change: unknown): unknown {
  if (!isObject(change)) return change; /* fnbox names what is wrong */
  const out: Json = { ...change };
  const seedKind = typeof out.type === 'string' && out.type in SEED_TYPE_NAMES ? KIND_OF[out.type] : undefined;
  if (seedKind) {
    out.kind ??= seedKind;
    out.type = typeof out.fileType === 'string' ? out.fileType : 'file';
  } else if (typeof out.kind === 'string' && out.kind in SEED_TYPE_NAMES) {
    out.kind = KIND_OF[out.kind];
  }
  delete out.fileType;
  delete out.timestamp;
  delete out.oldContent;
  if (out.content !== undefined) out.content = encodeContent(out.content);
  return out;
}
