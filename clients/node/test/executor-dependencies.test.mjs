// Dependencies on demand through the drop-in (`createExecutor`), local (`fnbox call --environments FILE`) and
// remote (a `fnbox serve --environments FILE`), against a REAL PEP 503 index on loopback (test/package-index.mjs:
// the integration suite's fixture wheels). The environments file's entry "host" gives the host's environment
// that index; "bare" has none.
// - A request's `dependencies` (at the root, and in v0.2's `options`) reaches fnbox: the function imports
//   fixdep (which pulls fixbase from the same index); `meta.dependencies.python` says miss, then hit on the
//   same layer. Without `dependencies` the import fails.
// - No index configured for the request's environment, or an entry that is an installer option: fnbox's
//   InvalidRequest naming `dependencies`; a package the index lacks: DependencyInstallFailed with pip's words.
// - The package's types take `dependencies` on FunctionCallRequest and InvokeOptions, and type
//   `meta.dependencies` (a typed program compiles).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createExecutor } from 'fnbox';
import { FIXDEP_VALUE, startPackageIndex } from './package-index.mjs';
import { startServer } from './processes.mjs';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(pkgDir, '../..');
const FNBOX = process.env.FNBOX_BIN || path.join(repo, 'build/fnbox');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-node-dependencies-'));
/* A cache of this file's own (first calls miss). A sandbox's init (nobody, under root) opens a layer by its
 * path: its parents must let it pass, and mkdtemp's are 0700. Every fnbox below inherits the variable. */
fs.chmodSync(dir, 0o755);
process.env.FNBOX_CACHE_DIR = path.join(dir, 'cache');
const envFile = path.join(dir, 'environments.json');
const IMPORT_FIXDEP = 'def f():\n    import fixdep\n    return fixdep.VALUE\n';
const NO_INDEX = 'dependencies.python: no package index configured for environment bare: set `indexes.python`';

let index;
let server;
before(async () => {
  index = await startPackageIndex(path.join(dir, 'index'));
  fs.writeFileSync(envFile, JSON.stringify({ environments: { host: { indexes: { python: index.url } }, bare: {} } }));
});
after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await index?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function executor(mode) {
  if (mode === 'local') return createExecutor({ binary: FNBOX, environments: envFile });
  server ??= await startServer(FNBOX, dir, dir, ['--environments', envFile]);
  return createExecutor({ baseUrl: server.baseUrl, token: server.token });
}

describe('dependencies', () => {
  /* each mode its own list, so each starts with a miss */
  const lists = { local: ['fixdep==2.1.0'], remote: ['fixdep>=2', 'fixbase==1.0.0'] };
  const layers = {};
  for (const mode of ['local', 'remote']) {
    test(`${mode}: a call imports what it names, installed once (miss), then at the root or in options (hit)`, async () => {
      const ex = await executor(mode);
      const first = await ex.execute({ language: 'python', code: IMPORT_FIXDEP, timeout: 120, dependencies: { python: lists[mode] } });
      assert.equal(first.status, 'success', JSON.stringify(first));
      assert.equal(first.result, FIXDEP_VALUE);
      const m1 = first.meta?.dependencies?.python;
      assert.equal(m1?.cache, 'miss', JSON.stringify(first.meta));
      assert.match(m1.layer, /^[0-9a-f]{64}$/);
      const second = await ex.execute({ language: 'python', code: IMPORT_FIXDEP, options: { dependencies: { python: lists[mode] } } });
      assert.equal(second.result, FIXDEP_VALUE, JSON.stringify(second));
      assert.deepEqual([second.meta?.dependencies?.python?.cache, second.meta?.dependencies?.python?.layer], ['hit', m1.layer]);
      layers[mode] = m1.layer;
    });

    test(`${mode}: no index for the environment, or an installer option, is InvalidRequest naming dependencies`, async () => {
      const ex = await executor(mode);
      const r = await ex.execute({ language: 'python', code: IMPORT_FIXDEP, environment: 'bare', dependencies: { python: ['fixdep'] } });
      assert.equal(r.status, 'error', JSON.stringify(r));
      assert.equal(r.error.type, 'InvalidRequest');
      assert.ok(r.error.message.startsWith(NO_INDEX), r.error.message);
      const bad = await ex.execute({ language: 'python', code: IMPORT_FIXDEP, options: { dependencies: { python: ['--index-url=http://evil.example/simple'] } } });
      assert.equal(bad.error?.type, 'InvalidRequest', JSON.stringify(bad));
      assert.match(bad.error.message, /^options\.dependencies\.python\[0\]: "--index-url=http:\/\/evil\.example\/simple": an installer option/);
    });

    test(`${mode}: a package the index lacks is DependencyInstallFailed with pip's message`, async () => {
      const ex = await executor(mode);
      const r = await ex.execute({ language: 'python', code: 'def f(): return 1', timeout: 120, dependencies: { python: ['nosuchpkg==1.0'] } });
      assert.equal(r.status, 'error', JSON.stringify(r));
      assert.equal(r.error.type, 'DependencyInstallFailed');
      assert.match(r.error.message, /No matching distribution found for nosuchpkg/);
    });
  }

  test('the lists are separate layers; without dependencies the package is not there', async () => {
    assert.notEqual(layers.local, layers.remote);
    const r = await (await executor('local')).execute({ language: 'python', code: IMPORT_FIXDEP });
    assert.equal(r.error?.type, 'ModuleNotFoundError', JSON.stringify(r));
  });

  test('typed code: dependencies on FunctionCallRequest and InvokeOptions, meta.dependencies', async () => {
    const tc = fs.mkdtempSync(path.join(pkgDir, '.typecheck-'));
    try {
      fs.writeFileSync(
        path.join(tc, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true },
          files: ['deps.ts'],
        }),
      );
      fs.writeFileSync(
        path.join(tc, 'deps.ts'),
        `import { createExecutor } from 'fnbox';
import type { Dependencies, FunctionCallRequest, InvokeOptions } from 'fnbox';
import type { FnboxSessionOptions } from 'fnbox/strands';

export async function main(): Promise<void> {
  const deps: Dependencies = { python: ['six==1.16.0'], javascript: ['left-pad@1.3.0'] };
  const request: FunctionCallRequest = { language: 'python', code: 'def f(): pass', dependencies: deps };
  const options: InvokeOptions = { dependencies: { python: ['six'] } };
  const session: FnboxSessionOptions = { dependencies: { javascript: ['left-pad@^1.3.0'] } };
  const python: string[] | undefined = request.dependencies?.python;
  const js: string[] | undefined = options.dependencies?.javascript ?? session.dependencies?.javascript;
  const r = await createExecutor().execute({ ...request, options });
  const cache: 'hit' | 'miss' | undefined = r.meta?.dependencies?.python?.cache;
  const layer: string | undefined = r.meta?.dependencies?.javascript?.layer;
  const ms: number | undefined = r.meta?.dependencies?.python?.installMs;
  console.log(python, js, cache, layer, ms);
}
`,
      );
      const tsc = path.join(pkgDir, 'node_modules/typescript/bin/tsc');
      const child = spawn(process.execPath, [tsc, '-p', path.join(tc, 'tsconfig.json')], { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const code = await new Promise((r) => child.on('exit', r));
      assert.equal(code, 0, out);
    } finally {
      fs.rmSync(tc, { recursive: true, force: true });
    }
  });
});
