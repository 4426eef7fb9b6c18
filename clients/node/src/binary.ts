/** Finding the `fnbox` binary for local mode: the option, then `FNBOX_BIN`, then `PATH`. */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { FnboxError } from './errors.js';

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The path of the fnbox binary to run, or a FnboxError saying how to name one. */
export function resolveBinary(binary?: string): string {
  const given = binary ?? process.env.FNBOX_BIN;
  if (given !== undefined && given !== '') {
    if (!isExecutableFile(given)) {
      const from = binary !== undefined ? 'the binary option' : 'FNBOX_BIN';
      throw new FnboxError('BinaryNotFound', `${from} names ${given}, which is not an executable file`, { code: 'ENOENT' });
    }
    return given;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'fnbox');
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new FnboxError(
    'BinaryNotFound',
    'fnbox was not found: pass { binary } (path to fnbox), set FNBOX_BIN, put fnbox on PATH, or give { baseUrl } of a running fnbox serve',
    { code: 'ENOENT' },
  );
}
