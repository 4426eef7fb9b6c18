// Named environments through the drop-in (`createExecutor`), local (`fnbox call --environments FILE`, the
// `environments` option) and remote (a `fnbox serve --environments FILE`): a request's `environment`
// (at the root or in v0.2's `options`) reaches fnbox, a name the file has runs, an unknown one is fnbox's
// InvalidRequest naming `environment` and listing the known ones.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createExecutor } from 'fnbox';
import { startServer } from './processes.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FNBOX = process.env.FNBOX_BIN || path.join(repo, 'build/fnbox');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-node-environments-'));
const envFile = path.join(dir, 'environments.json');
fs.writeFileSync(envFile, JSON.stringify({ environments: { plain: {}, other: {} } }));
const UNKNOWN = 'environment: unknown environment "gpu" (known: plain, other)';

let server;
after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

async function executors() {
  server ??= await startServer(FNBOX, dir, dir, ['--environments', envFile]);
  return {
    local: createExecutor({ binary: FNBOX, environments: envFile }),
    remote: createExecutor({ baseUrl: server.baseUrl, token: server.token }),
  };
}

describe('environment', () => {
  for (const mode of ['local', 'remote']) {
    test(`${mode}: a named environment runs, at the root and in options`, async () => {
      const executor = (await executors())[mode];
      const r = await executor.execute({ language: 'python', code: 'def f(): return 6 * 7', environment: 'plain' });
      assert.equal(r.status, 'success', JSON.stringify(r));
      assert.equal(r.result, 42);
      const r2 = await executor.execute({ language: 'javascript', code: 'function f() { return 2 }', options: { environment: 'other' } });
      assert.equal(r2.result, 2, JSON.stringify(r2));
    });

    test(`${mode}: an unknown name is InvalidRequest listing the known ones`, async () => {
      const executor = (await executors())[mode];
      const r = await executor.execute({ language: 'python', code: 'def f(): return 1', environment: 'gpu' });
      assert.equal(r.status, 'error', JSON.stringify(r));
      assert.equal(r.error.type, 'InvalidRequest');
      assert.equal(r.error.message, UNKNOWN);
    });
  }
});
