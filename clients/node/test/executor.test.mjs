// The drop-in for @isdk/sandbox-executor (`import { createExecutor, SyncStates } from 'fnbox'`), against the
// real build/fnbox (FNBOX_BIN), in both modes: local (`fnbox call` per call) and remote (a test-started
// `fnbox serve` with a token). The seed README's examples run verbatim; every event with skip and abort
// is checked on the host's files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FnboxError, SandboxExecutor, SyncStates, createExecutor } from 'fnbox';
import { startServer } from './processes.mjs';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(pkgDir, '../..');
const FNBOX = process.env.FNBOX_BIN || path.join(repo, 'build/fnbox');
/* The seed's code calls createExecutor() bare: local mode then finds fnbox through FNBOX_BIN. */
process.env.FNBOX_BIN = FNBOX;

const origCwd = process.cwd();
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-node-executor-'));
const dirs = { local: path.join(root, 'local'), remote: path.join(root, 'remote') };
fs.mkdirSync(dirs.local);
fs.mkdirSync(dirs.remote);

/* Host mounts are served over FUSE: a user other than root who cannot open /dev/fuse read-write has every
 * `mount` refused (KernelFeatureMissing; `fnbox doctor` says so), so the mount tests skip for that user,
 * saying why (scripts/test.sh runs the client suites once more as such a user). */
function fuseRefused() {
  if (process.geteuid() === 0) return false;
  try {
    fs.accessSync('/dev/fuse', fs.constants.R_OK | fs.constants.W_OK);
    return false;
  } catch {
    return 'host mounts need read-write access to /dev/fuse, which this user lacks (fnbox doctor: fuse)';
  }
}
const MOUNTS = { skip: fuseRefused() };

/* ---------- helpers ---------- */

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every process whose parent chain reaches pid (from /proc). */
function descendants(pid) {
  const children = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  const out = [];
  const queue = [pid];
  while (queue.length) {
    for (const c of children.get(queue.shift()) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

async function waitFor(cond, ms, what) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A fresh host directory (relative to the mode's working directory) holding the given files. */
function hostDir(name, files = {}) {
  const dir = path.resolve(name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    if (content !== null) fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

const exists = (p) => fs.existsSync(p);
const read = (p) => fs.readFileSync(p, 'utf8');

/* ---------- the server for remote mode ---------- */

let server;

before(async () => {
  server = await startServer(FNBOX, root, dirs.remote);
});

after(async () => {
  process.chdir(origCwd);
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  /* nothing this suite started is left: no fnbox call, no sandbox, no server */
  assert.deepEqual(descendants(process.pid), []);
  fs.rmSync(root, { recursive: true, force: true });
});

/* ---------- the same suite in both modes ---------- */

for (const mode of ['local', 'remote']) {
  describe(`${mode} mode`, () => {
    /** An executor of this mode (the seed's options plus, in remote mode, the server). */
    const make = (options = {}) =>
      mode === 'local' ? createExecutor(options) : createExecutor({ baseUrl: server.baseUrl, token: server.token, ...options });

    before(() => process.chdir(dirs[mode]));

    describe('the seed README, verbatim', () => {
      test('Python with kwargs', async () => {
        const executor = make();
        assert.ok(executor instanceof SandboxExecutor);
        // Python
        const result = await executor.execute({
          language: 'python',
          code: `
def greet(name, greeting="Hello"):
    return f"{greeting}, {name}!"
`,
          functionName: 'greet',
          args: ['World'],
          kwargs: { greeting: 'Hi' },
        });
        assert.equal(result.result, 'Hi, World!');
        assert.equal(result.status, 'success');
        assert.equal(result.success, true);
        assert.equal(result.exitCode, 0);
        assert.equal(result.meta.signatureSource, 'inferred');
      });

      test('PHP (without <?php)', async () => {
        const executor = make();
        const phpResult = await executor.execute({
          language: 'php',
          code: `
function multiply($a, $b) {
  return $a * $b;
}
`,
          functionName: 'multiply',
          args: [6, 7],
        });
        assert.equal(phpResult.result, 42);
      });

      test('JavaScript with kwargs onto the options object', async () => {
        const executor = make();
        const jsResult = await executor.execute({
          language: 'js',
          code: `
function calculate(a, b, options = {}) {
  const { multiplier = 1 } = options;
  return (a + b) * multiplier;
}
`,
          functionName: 'calculate',
          args: [5, 3],
          kwargs: { multiplier: 10 },
        });
        assert.equal(jsResult.result, 80);
      });

      test('virtual files', async () => {
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: `
def process(input_path, output_path):
    with open(input_path) as f:
        data = f.read()
    with open(output_path, 'w') as f:
        f.write(data.upper())
    return len(data)
`,
          functionName: 'process',
          args: ['/workspace/input.txt', '/workspace/output.txt'],
          files: {
            'input.txt': 'hello world',
          },
        });
        assert.equal(result.result, 11);
        assert.deepEqual(
          result.files?.created.map((c) => c.path),
          ['/workspace/output.txt'],
        );
        /* the seed's FileChange: what happened in type, the bytes, size, timestamp */
        const out = result.files.created[0];
        assert.equal(out.type, 'create');
        assert.ok(out.content instanceof Uint8Array);
        assert.equal(new TextDecoder().decode(out.content), 'HELLO WORLD');
        assert.ok(out.timestamp instanceof Date);
        /* the seed's FileChangeSummary methods, not enumerable */
        assert.equal(result.files.hasChanges(), true);
        assert.equal(result.files.all().length, 1);
        assert.equal(result.files.byPath('/workspace/output.txt').size, 11);
        assert.deepEqual(Object.keys(result.files), ['created', 'modified', 'deleted', 'denied']);
      });

      test('real directory mount: permissions, exclude, eager loading, batch sync to the host', MOUNTS, async () => {
        const data = hostDir('my-project/data', {
          'input/a.txt': 'alpha\n',
          'input/b.txt': 'beta\n',
          'output/.keep': '',
          'node_modules/dep/index.js': 'x',
          '.git/HEAD': 'ref',
        });
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: `
def process_files(input_dir, output_dir):
    import os
    for name in os.listdir(input_dir):
        with open(f'{input_dir}/{name}') as f:
            data = f.read()
        with open(f'{output_dir}/{name}.out', 'w') as f:
            f.write(data.upper())
    return 'done'
`,
          functionName: 'process_files',
          args: ['/data/input', '/data/output'],
          mount: {
            dirs: {
              '/data': './my-project/data',
            },
            permissions: {
              default: { read: true, list: true },
              rules: [
                { pattern: 'output/**', allow: ['create', 'modify'] },
              ],
              exclude: ['node_modules', '.git'],
            },
            loading: { mode: 'eager' },
            sync: { mode: 'batch', onError: 'continue' },
          },
        });
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        assert.equal(result.result, 'done');
        assert.equal(read(path.join(data, 'output/a.txt.out')), 'ALPHA\n');
        assert.equal(read(path.join(data, 'output/b.txt.out')), 'BETA\n');
        assert.deepEqual(result.files.created.map((c) => c.path).sort(), ['/data/output/a.txt.out', '/data/output/b.txt.out']);
        assert.deepEqual(result.sync.synced.sort(), ['/data/output/a.txt.out', '/data/output/b.txt.out']);
        assert.equal(read(path.join(data, 'input/a.txt')), 'alpha\n');
      });

      test('manual sync, then syncFiles with only the chosen changes', MOUNTS, async () => {
        const output = hostDir('output');
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: `
def generate():
    import json
    with open('report.json', 'w') as f:
        json.dump({"total": 3}, f)
    with open('notes.txt', 'w') as f:
        f.write('scratch')
    return 'ok'
`,
          functionName: 'generate',
          mount: {
            dirs: { '/workspace': './output' },
            sync: { mode: 'manual' },
          },
        });
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        // Inspect changes first
        assert.deepEqual(result.files?.created.map((c) => c.path).sort(), ['/workspace/notes.txt', '/workspace/report.json']);
        assert.deepEqual(fs.readdirSync(output), [], 'manual mode leaves the host alone');
        // Sync only selected files
        const toSync = result.files?.created.filter(f => f.path.endsWith('.json')) ?? [];
        const syncResult = await executor.syncFiles(toSync, { dirs: { '/workspace': './output' } });
        assert.deepEqual(syncResult, { synced: ['/workspace/report.json'], failed: [], skipped: [] });
        assert.equal(syncResult.report.message, '1 of 1 change written to the host');
        assert.deepEqual(fs.readdirSync(output), ['report.json']);
        assert.deepEqual(JSON.parse(read(path.join(output, 'report.json'))), { total: 3 });
      });

      test('syncFiles with the README options, and with the seed\'s own change shape', MOUNTS, async () => {
        const output = hostDir('output2');
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: "def make():\n    open('a.txt', 'w').write('A')\n    open('b.bin', 'wb').write(bytes([0, 255, 7]))\n",
          mount: { dirs: { '/workspace': './output2' } },
        });
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        const syncResult = await executor.syncFiles(
          result.files?.created ?? [],
          { dirs: { '/workspace': './output2' } },
          { onError: 'continue' }
        );
        assert.deepEqual(syncResult.synced.sort(), ['/workspace/a.txt', '/workspace/b.bin']);
        assert.deepEqual([...fs.readFileSync(path.join(output, 'b.bin'))], [0, 255, 7]);
        /* the seed's in-memory FileChange: type create|modify|delete, Uint8Array content */
        const seedShaped = await executor.syncFiles(
          [
            { type: 'create', path: '/workspace/c.txt', content: new TextEncoder().encode('from bytes'), size: 10, timestamp: new Date() },
            { type: 'delete', path: '/workspace/a.txt', size: 0, timestamp: new Date() },
          ],
          { dirs: { '/workspace': './output2' } },
        );
        assert.deepEqual(seedShaped.synced.sort(), ['/workspace/a.txt', '/workspace/c.txt']);
        assert.equal(read(path.join(output, 'c.txt')), 'from bytes');
        assert.equal(exists(path.join(output, 'a.txt')), false);
      });

      test('type-safe results (execute<T>)', async () => {
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: `
def get_user():
    return {"name": "Alice", "age": 30}
`,
          functionName: 'get_user',
        });
        assert.equal(result.success, true);
        assert.equal(result.result?.name, 'Alice');
        assert.deepEqual(result.result, { name: 'Alice', age: 30 });
      });

      test('error handling: the language\'s exception type', async () => {
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: 'def divide(a, b): return a / b',
          functionName: 'divide',
          args: [1, 0],
        });
        assert.equal(result.status, 'error');
        assert.equal(result.success, false);
        assert.equal(result.exitCode, 1);
        assert.equal(result.error?.type, 'ZeroDivisionError');
        assert.match(result.error.message, /division by zero/);
        assert.match(result.error.stack, /user_code\.py/);
      });

      test('custom workdir: defaultWorkdir, and per request', async () => {
        const executor = make({ defaultWorkdir: '/app' });
        const code = 'def where():\n    import os\n    return os.getcwd()\n';
        assert.equal((await executor.execute({ language: 'python', code })).result, '/app');
        assert.equal((await executor.execute({ language: 'python', code, workdir: '/custom/path' })).result, '/custom/path');
        assert.equal((await executor.execute({ language: 'python', code, options: { workdir: '/v2' } })).result, '/v2');
        assert.equal((await make().execute({ language: 'python', code })).result, '/workspace');
      });
    });

    describe('events', MOUNTS, () => {
      const writer = (paths) =>
        `def write():\n    import os\n` +
        paths.map((p) => `    os.makedirs(os.path.dirname(${JSON.stringify(p)}), exist_ok=True)\n    open(${JSON.stringify(p)}, 'w').write('x')\n`).join('') +
        `    return 'written'\n`;
      const mountOf = (dir, sync = { mode: 'batch', onError: 'continue' }) => ({
        dirs: { '/data': `./${dir}` },
        permissions: { default: { read: true, list: true, create: true, modify: true, delete: true } },
        sync,
      });

      test('the seed README\'s handlers: skip a .tmp file, abort at /secrets/; afterSync, permissionDenied', async () => {
        const host = hostDir('ev1', { 'ro/keep.txt': 'keep' });
        const executor = make();
        const seen = { before: [], after: [], errors: [], denied: [], thisObjects: [] };
        // Before sync - can skip or abort
        executor.on('beforeSync', function(change) {
          seen.before.push(change.path);
          seen.thisObjects.push(this);
          // Skip specific files
          if (change.path.endsWith('.tmp')) {
            this.result = { state: SyncStates.SKIP, reason: 'Temporary file' };
            return;
          }
          // Abort entire sync
          if (change.path.includes('/secrets/')) {
            this.result = { state: SyncStates.ABORT };
            this.stopped = true;
          }
        });
        // After sync - notification only
        executor.on('afterSync', function(data) {
          seen.after.push({ path: data.path, success: data.success, error: data.error });
        });
        // Error handling
        executor.on('syncError', function(change, error) {
          seen.errors.push({ path: change.path, error });
        });
        // Permission denied
        executor.on('permissionDenied', function(record) {
          seen.denied.push(record);
        });
        const result = await executor.execute({
          language: 'python',
          code: writer(['/data/a.txt', '/data/scratch.tmp', '/data/secrets/key.txt', '/data/zz/late.txt']) .replace(
            "    return 'written'\n",
            "    try:\n        open('/data/ro/keep.txt', 'w').write('no')\n    except PermissionError:\n        pass\n    return 'written'\n"),
          functionName: 'write',
          mount: {
            dirs: { '/data': './ev1' },
            permissions: {
              default: { read: true, list: true, create: true },
              rules: [{ pattern: 'ro/**', deny: ['modify'] }],
            },
            sync: { mode: 'batch', onError: 'continue' },
          },
        });
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        /* fnbox's sync order: shallowest first, ties by path; /secrets/ aborts, so zz/late.txt is never asked */
        assert.deepEqual(seen.before, ['/data/a.txt', '/data/scratch.tmp', '/data/secrets', '/data/zz', '/data/secrets/key.txt']);
        assert.ok(seen.thisObjects.every((t) => typeof t === 'object' && 'result' in t && 'stopped' in t));
        assert.ok(exists(path.join(host, 'a.txt')), 'a change before the abort is written (onError continue)');
        assert.equal(exists(path.join(host, 'scratch.tmp')), false, 'the skipped change is not written');
        assert.equal(exists(path.join(host, 'secrets/key.txt')), false, 'the aborting change is not written');
        assert.equal(exists(path.join(host, 'zz/late.txt')), false, 'nothing after the abort is written');
        assert.equal(read(path.join(host, 'ro/keep.txt')), 'keep');
        /* every change is still reported, as a batch-synced result lists them */
        assert.deepEqual(result.files.created.map((c) => c.path).sort(), [
          '/data/a.txt', '/data/scratch.tmp', '/data/secrets', '/data/secrets/key.txt', '/data/zz', '/data/zz/late.txt',
        ]);
        assert.deepEqual(result.sync.skipped, [{ path: '/data/scratch.tmp', reason: 'skipped by beforeSync: Temporary file' }]);
        assert.deepEqual(result.sync.notAttempted, ['/data/secrets/key.txt', '/data/zz/late.txt']);
        assert.deepEqual(result.sync.synced.sort(), ['/data/a.txt', '/data/secrets', '/data/zz']);
        assert.deepEqual(seen.after.map((a) => [a.path, a.success]), [['/data/a.txt', true], ['/data/secrets', true], ['/data/zz', true]]);
        assert.deepEqual(seen.errors, []);
        assert.deepEqual(seen.denied, [{ path: '/data/ro/keep.txt', operation: 'modify', rule: 'rules[0] "ro/**"' }]);
        assert.deepEqual(result.files.denied, seen.denied);
        assert.deepEqual(result.events.map((e) => e.type), [
          'permissionDenied', 'beforeSync', 'afterSync', 'beforeSync', 'beforeSync', 'afterSync', 'beforeSync', 'afterSync', 'beforeSync',
        ]);
        assert.deepEqual(Object.keys(result).slice(-4), ['files', 'sync', 'events', 'meta']);
      });

      test('abort under onError rollback keeps nothing', async () => {
        const host = hostDir('ev2');
        const executor = make();
        executor.on('beforeSync', function (change) {
          if (change.path.endsWith('/b.txt')) this.result = { state: SyncStates.ABORT };
        });
        const result = await executor.execute({
          language: 'python',
          code: writer(['/data/a.txt', '/data/b.txt', '/data/c.txt']),
          mount: mountOf('ev2', { mode: 'batch' }),
        });
        assert.equal(result.result, 'written');
        assert.deepEqual(fs.readdirSync(host), []);
        assert.deepEqual(result.sync.synced, []);
        assert.deepEqual(result.sync.notAttempted, ['/data/a.txt', '/data/b.txt', '/data/c.txt']);
      });

      test('syncEventConfig.allowAbort false: an abort is ignored, as in the seed (the change is written)', async () => {
        const host = hostDir('ev3');
        const executor = make({ syncEventConfig: { allowAbort: false } });
        const asked = [];
        executor.on('beforeSync', function (change) {
          asked.push(change.path);
          this.result = { state: SyncStates.ABORT };
          this.stopped = true;
        });
        await executor.execute({
          language: 'python',
          code: writer(['/data/a.txt', '/data/b.txt']),
          mount: mountOf('ev3'),
        });
        assert.deepEqual(asked, ['/data/a.txt', '/data/b.txt']);
        assert.deepEqual(fs.readdirSync(host).sort(), ['a.txt', 'b.txt']);
      });

      test('handlers in order: stopped ends the chain; without it a later handler overrides; async handlers are awaited; once and off', async () => {
        const host = hostDir('ev4');
        const executor = make();
        const calls = [];
        const second = function (change) {
          calls.push(`second ${change.path}`);
          if (change.path.endsWith('/b.txt')) this.result = { state: SyncStates.CONTINUE };
        };
        executor.on('beforeSync', function (change) {
          calls.push(`first ${change.path}`);
          if (change.path.endsWith('/a.txt')) {
            this.result = { state: SyncStates.SKIP };
            this.stopped = true;
          } else if (change.path.endsWith('/b.txt')) {
            this.result = { state: SyncStates.SKIP }; /* overridden by the second handler */
          }
        });
        executor.on('beforeSync', second);
        executor.on('beforeSync', async function (change) {
          calls.push(`async ${change.path}`);
          await sleep(5);
          if (change.path.endsWith('/c.txt')) this.result = { state: SyncStates.SKIP, reason: 'async' };
        });
        let onceCalls = 0;
        executor.once('afterSync', () => onceCalls++);
        const removed = () => assert.fail('an off() listener was called');
        executor.on('afterSync', removed);
        executor.off('afterSync', removed);
        assert.equal(executor.listenerCount('beforeSync'), 3);
        await executor.execute({ language: 'python', code: writer(['/data/a.txt', '/data/b.txt', '/data/c.txt', '/data/d.txt']), mount: mountOf('ev4') });
        assert.deepEqual(calls, [
          'first /data/a.txt',
          'first /data/b.txt', 'second /data/b.txt', 'async /data/b.txt',
          'first /data/c.txt', 'second /data/c.txt', 'async /data/c.txt',
          'first /data/d.txt', 'second /data/d.txt', 'async /data/d.txt',
        ]);
        assert.deepEqual(fs.readdirSync(host).sort(), ['b.txt', 'd.txt']);
        assert.equal(onceCalls, 1);
        assert.equal(executor.listenerCount('afterSync'), 0);
      });

      test('syncError and afterSync(success false) when a write fails (beforeSync path, deterministic)', async () => {
        const host = hostDir('ev5');
        const executor = make();
        executor.on('beforeSync', function (change) {
          /* the host gets its own c.txt after the call: a created file never overwrites one */
          if (change.path === '/data/c.txt') fs.writeFileSync(path.join(host, 'c.txt'), 'host');
        });
        const after = [];
        const errors = [];
        executor.on('afterSync', (data) => after.push(data));
        executor.on('syncError', (change, error) => errors.push({ change, error }));
        const result = await executor.execute({ language: 'python', code: writer(['/data/a.txt', '/data/c.txt']), mount: mountOf('ev5') });
        assert.equal(read(path.join(host, 'c.txt')), 'host');
        assert.equal(read(path.join(host, 'a.txt')), 'x');
        assert.equal(errors.length, 1);
        assert.equal(errors[0].change.path, '/data/c.txt');
        assert.equal(errors[0].change.type, 'create');
        assert.equal(errors[0].change.fileType, 'file');
        assert.ok(errors[0].error instanceof FnboxError);
        assert.equal(errors[0].error.type, 'SyncFailed');
        assert.match(errors[0].error.message, /already exists/);
        const failed = after.find((a) => a.path === '/data/c.txt');
        assert.equal(failed.success, false);
        assert.equal(failed.error, errors[0].error);
        assert.equal(failed.realPath, path.join(host, 'c.txt'));
        assert.equal(result.sync.success, false);
        assert.deepEqual(result.sync.failed.map((f) => f.path), ['/data/c.txt']);
      });

      test('syncError without beforeSync handlers (fnbox\'s own batch sync): a link planted during the call', async () => {
        const host = hostDir('ev6');
        hostDir('ev6-elsewhere');
        const executor = make();
        const after = [];
        const errors = [];
        executor.on('afterSync', (data) => after.push(data));
        executor.on('syncError', (change, error) => errors.push({ change, error }));
        /* the function says when its files are written (streamed stdout); the link goes in then */
        let planted = false;
        const result = await executor.execute(
          {
            language: 'python',
            code: "def slow_writer_fnbox_node_marker():\n    import os, time\n    os.mkdir('/data/sub')\n    open('/data/sub/x.txt', 'w').write('x')\n    open('/data/ok.txt', 'w').write('ok')\n    print('written', flush=True)\n    time.sleep(1)\n    return 1\n",
            mount: mountOf('ev6'),
          },
          {
            onStdout: (data) => {
              if (data.includes('written') && !planted) {
                fs.symlinkSync('../ev6-elsewhere', path.join(host, 'sub'));
                planted = true;
              }
            },
          },
        );
        assert.ok(planted);
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        assert.equal(read(path.join(host, 'ok.txt')), 'ok');
        assert.deepEqual(fs.readdirSync(path.resolve('ev6-elsewhere')), [], 'nothing written through the link');
        assert.ok(errors.length >= 1);
        assert.ok(errors.some((e) => e.change.path === '/data/sub/x.txt' && /symbolic link/.test(e.error.message)));
        assert.ok(errors.every((e) => e.error instanceof FnboxError && e.error.type === 'SyncFailed'));
        assert.ok(after.some((a) => a.path === '/data/ok.txt' && a.success === true));
        assert.ok(after.some((a) => a.path === '/data/sub/x.txt' && a.success === false));
      });

      test('permissionDenied for a denied write, with and without beforeSync handlers', async () => {
        for (const withHandler of [false, true]) {
          const host = hostDir('ev7', { 'input/in.txt': 'in' });
          const executor = make();
          const denied = [];
          executor.on('permissionDenied', function (record) {
            denied.push(record);
          });
          if (withHandler) executor.on('beforeSync', () => {});
          const result = await executor.execute({
            language: 'python',
            code: "def evil():\n    try:\n        open('/data/input/evil.txt', 'w').write('x')\n    except PermissionError as e:\n        return e.errno\n",
            mount: { dirs: { '/data': './ev7' }, permissions: { default: { read: true, list: true } }, sync: { mode: 'batch' } },
          });
          assert.equal(result.result, 13);
          assert.deepEqual(denied, [{ path: '/data/input/evil.txt', operation: 'create', rule: 'default' }], `withHandler=${withHandler}`);
          assert.equal(exists(path.join(host, 'input/evil.txt')), false);
        }
      });

      test('a batch mount without permissions may only read and list, with or without handlers', async () => {
        for (const withHandler of [false, true]) {
          const host = hostDir('ev8');
          const executor = make();
          if (withHandler) executor.on('beforeSync', () => {});
          const result = await executor.execute({
            language: 'python',
            code: "def w():\n    try:\n        open('/data/new.txt', 'w').write('x')\n        return 'wrote'\n    except PermissionError:\n        return 'denied'\n",
            mount: { dirs: { '/data': './ev8' }, sync: { mode: 'batch' } },
          });
          assert.equal(result.result, 'denied', `withHandler=${withHandler}`);
          assert.deepEqual(fs.readdirSync(host), []);
        }
      });

      test('a call that fails syncs nothing (fnbox\'s rule), handlers are not asked', async () => {
        const host = hostDir('ev9');
        const executor = make();
        let asked = 0;
        executor.on('beforeSync', () => asked++);
        const result = await executor.execute({
          language: 'python',
          code: "def f():\n    open('/data/a.txt', 'w').write('x')\n    return 1 / 0\n",
          mount: mountOf('ev9'),
        });
        assert.equal(result.error.type, 'ZeroDivisionError');
        assert.equal(asked, 0);
        assert.deepEqual(fs.readdirSync(host), []);
        assert.equal(result.sync, undefined);
      });
    });

    describe("the seed's FileChange (issue 29: the drop-in handed over fnbox's wire form)", MOUNTS, () => {
      /* A host directory (absolute: realPath is known in both modes) the function changes in every way. */
      const changer =
        "def change():\n    import os\n" +
        "    open('/data/new.txt', 'w').write('h\u00e9llo\\n')\n" +
        "    open('/data/bin.dat', 'wb').write(bytes([0, 255, 10]))\n" +
        "    open('/data/old.txt', 'w').write('newer')\n" +
        "    os.remove('/data/gone.txt')\n" +
        "    os.mkdir('/data/sub')\n" +
        "    return 'changed'\n";
      const setup = (name, sync) => {
        const host = hostDir(name, { 'old.txt': 'old', 'gone.txt': 'bye' });
        const mount = {
          dirs: { '/data': host },
          permissions: { default: { read: true, list: true, create: true, modify: true, delete: true } },
          sync,
        };
        return { host, mount };
      };
      const bytes = (s) => new TextEncoder().encode(s);
      /** A change without its timestamp and bytes, to compare; checks both are the seed's types. */
      const plain = (c) => {
        assert.ok(c.timestamp instanceof Date, `${c.path}: timestamp ${c.timestamp}`);
        assert.ok(c.content === undefined || c.content instanceof Uint8Array, `${c.path}: content`);
        const { timestamp: _t, content, ...rest } = c;
        return content === undefined ? rest : { ...rest, content: Array.from(content) };
      };
      const expected = {
        '/data/new.txt': { type: 'create', path: '/data/new.txt', size: 7, fileType: 'file', content: Array.from(bytes('h\u00e9llo\n')) },
        '/data/bin.dat': { type: 'create', path: '/data/bin.dat', size: 3, fileType: 'file', content: [0, 255, 10] },
        '/data/sub': { type: 'create', path: '/data/sub', size: 0, fileType: 'directory' },
        '/data/old.txt': { type: 'modify', path: '/data/old.txt', size: 5, fileType: 'file', content: Array.from(bytes('newer')) },
        '/data/gone.txt': { type: 'delete', path: '/data/gone.txt', size: 0, fileType: 'file' },
      };

      test('result.files lists the seed\'s changes: type create|modify|delete, Uint8Array content, size, timestamp', async () => {
        const { mount } = setup(`fc1-${mode}`, { mode: 'manual' });
        const executor = make();
        const before = Date.now();
        const result = await executor.execute({ language: 'python', code: changer, functionName: 'change', mount });
        const after = Date.now();
        assert.equal(result.result, 'changed', JSON.stringify(result.error));
        const byPath = (list) => Object.fromEntries(list.map((c) => [c.path, plain(c)]));
        assert.deepEqual(byPath(result.files.created), {
          '/data/new.txt': expected['/data/new.txt'], '/data/bin.dat': expected['/data/bin.dat'], '/data/sub': expected['/data/sub'],
        });
        assert.deepEqual(byPath(result.files.modified), { '/data/old.txt': expected['/data/old.txt'] });
        assert.deepEqual(byPath(result.files.deleted), { '/data/gone.txt': expected['/data/gone.txt'] });
        for (const c of result.files.all()) {
          assert.ok(c.timestamp.getTime() >= before && c.timestamp.getTime() <= after, `${c.path}: ${c.timestamp.toISOString()}`);
        }
        /* seed code over them */
        const created = result.files.all().filter((c) => c.type === 'create').map((c) => c.path).sort();
        assert.deepEqual(created, ['/data/bin.dat', '/data/new.txt', '/data/sub']);
        assert.equal(new TextDecoder().decode(result.files.byPath('/data/old.txt').content), 'newer');
      });

      test("the seed README's event handlers get the seed's change: beforeSync the change, afterSync {...change, realPath, success}", async () => {
        const { host, mount } = setup(`fc2-${mode}`, { mode: 'batch', onError: 'continue' });
        const executor = make();
        const seen = { before: [], after: [], errors: [], creates: [] };
        // Before sync - can skip or abort
        executor.on('beforeSync', function(change) {
          seen.before.push(change);
          if (change.type === 'create') seen.creates.push(change.path);
          // Skip specific files
          if (change.path.endsWith('.tmp')) {
            this.result = { state: SyncStates.SKIP, reason: 'Temporary file' };
            return;
          }
        });
        // After sync - notification only
        executor.on('afterSync', function(data) {
          seen.after.push(data);
        });
        // Error handling
        executor.on('syncError', function(change, error) {
          seen.errors.push({ change, error });
        });
        const result = await executor.execute({ language: 'python', code: changer, functionName: 'change', mount });
        assert.equal(result.result, 'changed', JSON.stringify(result.error));
        assert.deepEqual(seen.errors, []);
        assert.deepEqual(seen.creates.sort(), ['/data/bin.dat', '/data/new.txt', '/data/sub']);
        const hostOf = (p) => path.join(host, p.slice('/data/'.length));
        /* beforeSync: the change (and fnbox's realPath), no kind */
        assert.deepEqual(
          Object.fromEntries(seen.before.map((c) => [c.path, plain(c)])),
          Object.fromEntries(Object.entries(expected).map(([p, c]) => [p, { ...c, realPath: hostOf(p) }])),
        );
        /* afterSync: the same change, its realPath, success */
        assert.deepEqual(
          Object.fromEntries(seen.after.map((d) => [d.path, plain(d)])),
          Object.fromEntries(Object.entries(expected).map(([p, c]) => [p, { ...c, realPath: hostOf(p), success: true }])),
        );
        assert.deepEqual(fs.readFileSync(path.join(host, 'bin.dat')), Buffer.from([0, 255, 10]));
        assert.equal(read(path.join(host, 'old.txt')), 'newer');
        assert.equal(exists(path.join(host, 'gone.txt')), false);
        /* the result's own lists are the same shape */
        assert.deepEqual(plain(result.files.byPath('/data/new.txt')), expected['/data/new.txt']);
      });

      test("without beforeSync (fnbox's own batch sync), afterSync gets {...change, realPath, success}", async () => {
        const { host, mount } = setup(`fc3-${mode}`, { mode: 'batch', onError: 'continue' });
        const executor = make();
        const after = [];
        const errors = [];
        executor.on('afterSync', function(data) {
          after.push(data);
        });
        executor.on('syncError', function(change, error) {
          errors.push({ change, error });
        });
        const result = await executor.execute({ language: 'python', code: changer, functionName: 'change', mount });
        assert.equal(result.result, 'changed', JSON.stringify(result.error));
        const hostOf = (p) => path.join(host, p.slice('/data/'.length));
        assert.deepEqual(
          Object.fromEntries(after.map((d) => [d.path, plain(d)])),
          Object.fromEntries(Object.entries(expected).map(([p, c]) => [p, { ...c, realPath: hostOf(p), success: true }])),
        );
        assert.deepEqual(errors, []);
      });

      test('syncFiles takes the changes as result.files lists them: the bytes, the directory and the deletion reach the host', async () => {
        const { host, mount } = setup(`fc4-${mode}`, { mode: 'manual' });
        const executor = make();
        const result = await executor.execute({ language: 'python', code: changer, functionName: 'change', mount });
        assert.equal(result.result, 'changed', JSON.stringify(result.error));
        assert.deepEqual(fs.readdirSync(host).sort(), ['gone.txt', 'old.txt']);
        const s = await executor.syncFiles(result.files, { dirs: { '/data': host } });
        assert.deepEqual(s.failed, []);
        assert.deepEqual(s.synced.sort(), ['/data/bin.dat', '/data/gone.txt', '/data/new.txt', '/data/old.txt', '/data/sub']);
        assert.deepEqual(fs.readdirSync(host).sort(), ['bin.dat', 'new.txt', 'old.txt', 'sub']);
        assert.deepEqual(fs.readFileSync(path.join(host, 'bin.dat')), Buffer.from([0, 255, 10]));
        assert.equal(read(path.join(host, 'new.txt')), 'h\u00e9llo\n');
        assert.ok(fs.statSync(path.join(host, 'sub')).isDirectory());
      });
    });

    describe('requests and results', () => {
      test('v0.2 nested shape: options.files/workdir/reporting, object args, root timeout', async () => {
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: 'def greet(name, greeting="Hello"):\n    open("out.txt", "w").write(open("in.txt").read())\n    return f"{greeting}, {name}!"\n',
          functionName: 'greet',
          args: { name: 'World', greeting: 'Hi' },
          timeout: 10,
          options: {
            files: { 'in.txt': 'copied', 'bytes.bin': new Uint8Array([1, 2, 3]) },
            workdir: '/workspace',
            reporting: { includeContents: false },
          },
        });
        assert.equal(result.result, 'Hi, World!');
        const [out] = result.files.created;
        assert.equal(result.files.created.length, 1);
        assert.ok(out.timestamp instanceof Date);
        assert.deepEqual({ ...out, timestamp: 0 }, { type: 'create', path: '/workspace/out.txt', size: 6, timestamp: 0, fileType: 'file' });
      });

      test('v0.2 mount with a beforeSync handler; includeContents false still syncs', MOUNTS, async () => {
        const host = hostDir('v2m');
        const executor = make();
        executor.on('beforeSync', function (change) {
          if (change.path.endsWith('skip.txt')) this.result = { state: SyncStates.SKIP };
        });
        const result = await executor.execute({
          language: 'python',
          code: "def f():\n    open('/data/keep.txt', 'w').write('k')\n    open('/data/skip.txt', 'w').write('s')\n",
          options: {
            mount: { dirs: { '/data': './v2m' }, permissions: { default: { create: true } }, sync: { mode: 'batch' } },
            reporting: { includeContents: false },
          },
        });
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        assert.deepEqual(fs.readdirSync(host), ['keep.txt']);
        assert.ok(result.files.created.every((c) => !('content' in c)));
        const hidden = await executor.execute({
          language: 'python',
          code: "def f():\n    open('/data/other.txt', 'w').write('o')\n",
          options: {
            mount: { dirs: { '/data': './v2m' }, permissions: { default: { create: true } }, sync: { mode: 'batch' } },
            reporting: { includeChanges: false },
          },
        });
        assert.equal('files' in hidden, false);
        assert.deepEqual(hidden.sync.synced, ['/data/other.txt']);
        assert.deepEqual(fs.readdirSync(host).sort(), ['keep.txt', 'other.txt']);
      });

      test('an invalid request is an InvalidRequest result naming the field (not a throw)', async () => {
        const executor = make();
        const result = await executor.execute({ language: 'python', code: 'def f(): pass', functionName: 42 });
        assert.equal(result.status, 'error');
        assert.equal(result.success, false);
        assert.equal(result.error.type, 'InvalidRequest');
        assert.equal(result.error.message, 'functionName: must be a string, got number');
        const unknown = await executor.execute({ language: 'python', code: 'def f(): pass', bogus: true });
        assert.equal(unknown.error.message, 'bogus: unknown field');
      });

      test('a timeout is a result with status timeout', async () => {
        const executor = make();
        const result = await executor.execute({
          language: 'python',
          code: 'def sleepy_fnbox_node_marker():\n    import time\n    time.sleep(20)\n',
          timeout: 0.5,
        });
        assert.equal(result.status, 'timeout');
        assert.equal(result.success, false);
        assert.equal(result.exitCode, 124);
        assert.equal(result.error.type, 'TimeoutError');
      });

      test('streaming: onStdout / onStderr get the output as it is written', async () => {
        const executor = make();
        const out = [];
        const err = [];
        const result = await executor.execute(
          {
            language: 'python',
            code: "def talk():\n    import sys\n    print('line one', flush=True)\n    print('warn', file=sys.stderr, flush=True)\n    print('line two', flush=True)\n    return 3\n",
          },
          { onStdout: (d) => out.push(d), onStderr: (d) => err.push(d) },
        );
        assert.equal(result.result, 3);
        assert.equal(out.join(''), 'line one\nline two\n');
        assert.equal(err.join(''), 'warn\n');
        assert.equal(result.stdout, 'line one\nline two\n');
        assert.equal(result.stderr, 'warn\n');
        assert.equal('type' in result, false);
      });

      test('streaming: a callback that throws stops the run and the call rejects with its error', async () => {
        const executor = make();
        const watched = mode === 'local' ? process.pid : server.child.pid;
        const baseline = descendants(watched).length;
        const started = Date.now();
        await assert.rejects(
          executor.execute(
            { language: 'python', code: "def chatty_fnbox_node_marker():\n    import time\n    print('first', flush=True)\n    time.sleep(30)\n", timeout: 60 },
            { onStdout: () => { throw new Error('callback gave up'); } },
          ),
          { message: 'callback gave up' },
        );
        assert.ok(Date.now() - started < 5000);
        await waitFor(() => descendants(watched).length <= baseline, 5000, 'the run to be killed');
      });

      test('cancellation: aborting the signal kills the run and rejects with Cancelled', async () => {
        const executor = make();
        const watched = mode === 'local' ? process.pid : server.child.pid;
        const baseline = descendants(watched).length;
        for (const streamed of [false, true]) {
          const controller = new AbortController();
          const started = Date.now();
          const running = executor.execute(
            { language: 'python', code: 'def forever_fnbox_node_marker():\n    import time\n    time.sleep(30)\n', timeout: 60 },
            { signal: controller.signal, ...(streamed ? { onStdout: () => {} } : {}) },
          );
          await waitFor(() => descendants(watched).length > baseline, 5000, 'the run to start');
          await sleep(100);
          controller.abort();
          await assert.rejects(running, (e) => e instanceof FnboxError && e.type === 'Cancelled');
          assert.ok(Date.now() - started < 5000);
          await waitFor(() => descendants(watched).length <= baseline, 5000, 'the run to be killed');
        }
        const pre = new AbortController();
        pre.abort();
        await assert.rejects(executor.execute({ language: 'python', code: 'def f(): pass' }, { signal: pre.signal }), { type: 'Cancelled' });
      });

      test('syncFiles: an invalid mount throws FnboxError InvalidRequest with fnbox\'s message', async () => {
        const executor = make();
        await assert.rejects(executor.syncFiles([], {}), (e) => {
          assert.ok(e instanceof FnboxError);
          assert.equal(e.type, 'InvalidRequest');
          assert.match(e.message, /^mount\.dirs: required/);
          return true;
        });
      });

      test('a script using createExecutor exits by itself', async () => {
        const opts = mode === 'local' ? '{}' : JSON.stringify({ baseUrl: server.baseUrl, token: server.token });
        const script = `import { createExecutor } from 'fnbox';
const ex = createExecutor(${opts});
const r = await ex.execute({ language: 'python', code: 'def f(): return 7' });
console.log(r.result);`;
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
        const code = await new Promise((r) => child.on('exit', (c) => r(c)));
        clearTimeout(timer);
        assert.equal(code, 0, stderr);
        assert.equal(stdout.trim(), '7');
      });
    });
  });
}

describe('remote-only and local-only', () => {
  test('remote: a wrong token is FnboxError Unauthorized with the server\'s message', async () => {
    const executor = createExecutor({ baseUrl: server.baseUrl, token: 'not-the-right-token-at-all' });
    const check = (e) => {
      assert.ok(e instanceof FnboxError);
      assert.equal(e.type, 'Unauthorized');
      assert.equal(e.status, 401);
      assert.equal(e.message, 'the bearer token is not one this server accepts');
      return true;
    };
    await assert.rejects(executor.execute({ language: 'python', code: 'def f(): pass' }), check);
    await assert.rejects(executor.syncFiles([], { dirs: { '/data': '/tmp' } }), check);
    await assert.rejects(executor.execute({ language: 'python', code: 'def f(): pass' }, { onStdout: () => {} }), check);
    executor.close();
  });

  test('remote: an unreachable server is FnboxError ConnectionFailed', async () => {
    const executor = createExecutor({ baseUrl: 'http://127.0.0.1:1' });
    await assert.rejects(executor.execute({ language: 'python', code: 'def f(): pass' }), { type: 'ConnectionFailed' });
  });

  test('local: createExecutor never throws; a missing binary is FnboxError BinaryNotFound at the call', async () => {
    const executor = createExecutor({ binary: path.join(root, 'no-such-fnbox') });
    await assert.rejects(executor.execute({ language: 'python', code: 'def f(): pass' }), (e) => {
      assert.ok(e instanceof FnboxError);
      assert.equal(e.type, 'BinaryNotFound');
      assert.match(e.message, /no-such-fnbox/);
      return true;
    });
  });

  test('typed seed code compiles against the package\'s types', async () => {
    const dir = fs.mkdtempSync(path.join(pkgDir, '.typecheck-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'], skipLibCheck: true },
          files: ['seed.ts'],
        }),
      );
      fs.writeFileSync(
        path.join(dir, 'seed.ts'),
        `import { createExecutor, SyncStates } from 'fnbox';
import type { ExecutionResult, FileChange, FunctionCallRequest, MountConfig, SyncResult, AfterSyncEventData, PermissionDeniedRecord } from 'fnbox';

interface UserData {
  name: string;
  age: number;
}

const executor = createExecutor({
  defaultWorkdir: '/workspace', // Default: '/workspace'
  syncEventConfig: {
    allowAbort: true, // Allow beforeSync to abort entire sync
  },
});

export async function main(): Promise<void> {
  const result = await executor.execute<UserData>({
    language: 'python',
    code: 'def get_user():\\n    return {"name": "Alice", "age": 30}\\n',
    functionName: 'get_user',
  });
  if (result.success) {
    const name: string | undefined = result.result?.name;
    console.log(name);
  }
  executor.on('beforeSync', function(change) {
    if (change.path.endsWith('.tmp')) {
      this.result = { state: SyncStates.SKIP, reason: 'Temporary file' };
      return;
    }
    if (change.path.includes('/secrets/')) {
      this.result = { state: SyncStates.ABORT };
      this.stopped = true;
    }
  });
  executor.on('afterSync', function(data: AfterSyncEventData) {
    if (!data.success) console.log(data.path, data.error?.message);
    const what: 'create' | 'modify' | 'delete' = data.type;
    const bytes: Uint8Array | undefined = data.content;
    const when: Date = data.timestamp;
    const size: number = data.size;
    if (data.type === 'create') console.log(what, bytes?.byteLength, when.getTime(), size, data.realPath, data.fileType);
  });
  executor.on('permissionDenied', function(record: PermissionDeniedRecord) {
    console.warn(record.operation, record.path);
  });
  const mount: MountConfig = {
    dirs: { '/data': './my-project/data' },
    permissions: {
      default: { read: true, list: true },
      rules: [{ pattern: 'output/**', allow: ['create', 'modify'] }],
      exclude: ['node_modules', '.git'],
    },
    loading: { mode: 'eager' },
    sync: { mode: 'batch', onError: 'continue' },
  };
  const request: FunctionCallRequest = { language: 'python', code: 'def f(): pass', functionName: 'f', mount };
  const r: ExecutionResult = await executor.execute(request);
  const toSync: FileChange[] = r.files?.created.filter(f => f.path.endsWith('.json')) ?? [];
  const s: SyncResult = await executor.syncFiles(toSync, { dirs: { '/workspace': './output' } }, { onError: 'continue' });
  console.log(s.synced, s.failed.map((f) => f.error.message), s.skipped, r.files?.byPath('/x')?.size);
  switch (r.status) {
    case 'success': console.log('Result:', r.result); break;
    case 'error': console.log(r.error?.type); break;
    case 'crash': case 'timeout': case 'terminated': break;
  }
  const v2 = await executor.execute({
    language: 'python', code: 'def f(a): return a', args: { a: 1 }, timeout: 5,
    options: { workdir: '/w', files: { 'x.bin': new Uint8Array([1]) }, reporting: { includeChanges: false } },
  });
  console.log(v2.files === undefined);
}
`,
      );
      const tsc = path.join(pkgDir, 'node_modules/typescript/bin/tsc');
      const child = spawn(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.json')], { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      const code = await new Promise((r) => child.on('exit', r));
      assert.equal(code, 0, out);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
