/**
 * The few things the client does to a request before fnbox reads it, and the accessors for the fields
 * that live in two places (v0.1 root, v0.2 `options`). Requests are otherwise passed through untouched:
 * fnbox validates them and names the field when one is wrong.
 */
import type { FunctionCallRequest, MountConfig, ResultOptions } from '../types.js';
import { encodeContent } from './changes.js';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function encodeFiles(files: unknown): unknown {
  if (!isObject(files)) return files;
  const out: Json = {};
  for (const [name, content] of Object.entries(files)) out[name] = encodeContent(content);
  return out;
}

/** The v0.2 nested shape: `options` is an object. */
export function isNested(request: Json): boolean {
  return isObject(request.options);
}

/**
 * A copy of the request ready to send: byte contents of `files` as `{base64}`, and the executor's
 * `defaultWorkdir` where the request names no workdir. The caller's object is never changed.
 */
export function prepareRequest(request: FunctionCallRequest, defaultWorkdir: string | undefined): Json {
  if (!isObject(request)) return request as unknown as Json; /* fnbox answers InvalidRequest */
  const out: Json = { ...request };
  if (out.files !== undefined) out.files = encodeFiles(out.files);
  if (isObject(out.options)) {
    const options: Json = { ...out.options };
    if (options.files !== undefined) options.files = encodeFiles(options.files);
    out.options = options;
  }
  if (defaultWorkdir !== undefined && out.workdir === undefined && !(isObject(out.options) && out.options.workdir !== undefined)) {
    if (isObject(out.options)) (out.options as Json).workdir = defaultWorkdir;
    else out.workdir = defaultWorkdir;
  }
  return out;
}

export function getMount(request: Json): MountConfig | undefined {
  const mount = request.mount ?? (isObject(request.options) ? request.options.mount : undefined);
  return isObject(mount) ? (mount as unknown as MountConfig) : undefined;
}

/** A copy of the request with its mount (where it was given) replaced. */
export function withMount(request: Json, mount: MountConfig): Json {
  if (request.mount !== undefined) return { ...request, mount };
  return { ...request, options: { ...(request.options as Json), mount } };
}

export function getReporting(request: Json): ResultOptions {
  const reporting = request.resultOptions ?? (isObject(request.options) ? request.options.reporting : undefined);
  return isObject(reporting) ? (reporting as ResultOptions) : {};
}

/** A copy of the request with its reporting options replaced (where given, else where its shape puts them). */
export function withReporting(request: Json, reporting: ResultOptions): Json {
  if (request.resultOptions !== undefined || !isObject(request.options)) return { ...request, resultOptions: reporting };
  return { ...request, options: { ...(request.options as Json), reporting } };
}

export function getPermissions(request: Json): unknown {
  return request.permissions ?? (isObject(request.options) ? request.options.permissions : undefined);
}

/** Whether the request's presets (`allowAllFs`, `allowAll`) let a batch mount without `permissions` do everything. */
export function presetAllowsAllFs(permissions: unknown): boolean {
  const names = (p: unknown): string[] => (typeof p === 'string' ? [p] : Array.isArray(p) ? p.filter((x): x is string => typeof x === 'string') : []);
  const presets = isObject(permissions) ? names(permissions.preset) : names(permissions);
  return presets.includes('allowAll') || presets.includes('allowAllFs');
}
