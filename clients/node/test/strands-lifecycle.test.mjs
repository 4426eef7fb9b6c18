// FnboxSandbox's session and server lifecycle: local mode (a private `fnbox serve`, nothing left behind),
// remote mode (baseUrl, token, attaching to a session), session options, errors before anything runs.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Sandbox } from '@strands-agents/sdk';
import { FnboxError, FnboxSandbox } from 'fnbox/strands';
import { clientTempDirs, fnboxBinary, fnboxChildren, marker, rejection, sleep, waitFor } from './strands-helpers.mjs';

const binary = fnboxBinary();

describe('local mode', () => {
  test('a never-used sandbox starts nothing, and its close() is a no-op', async () => {
    const children = fnboxChildren().length;
    const dirs = clientTempDirs().length;
    const sb = new FnboxSandbox({ binary });
    assert.equal(sb.sessionId, undefined);
    assert.ok(sb.getTools().length === 2); /* vending tools opens nothing */
    await sb.close();
    await sb.close();
    assert.equal(fnboxChildren().length, children);
    assert.equal(clientTempDirs().length, dirs);
  });

  test('the first use starts a private fnbox serve and opens a session; close() leaves nothing', async () => {
    const childrenBefore = new Set(fnboxChildren());
    const dirsBefore = new Set(clientTempDirs());
    const sb = new FnboxSandbox({ binary });
    const m = marker('local');
    assert.equal((await sb.execute(`echo ${m}`)).stdout, `${m}\n`);
    assert.match(sb.sessionId, /^[0-9a-f]{16,}$/);
    const ours = fnboxChildren().filter((p) => !childrenBefore.has(p));
    const ourDirs = clientTempDirs().filter((d) => !dirsBefore.has(d));
    assert.equal(ours.length, 1, 'one private server');
    assert.equal(ourDirs.length, 1, 'one temp directory');
    await sb.close();
    assert.deepEqual(fnboxChildren().filter((p) => ours.includes(p)), [], 'the server is gone');
    assert.deepEqual(clientTempDirs().filter((d) => ourDirs.includes(d)), [], 'its temp directory is gone');
    const after = await rejection(sb.execute('echo again'));
    assert.ok(after instanceof FnboxError);
    assert.equal(after.type, 'Closed');
    await assert.rejects(sb.readFile('/tmp/x'), (e) => e.type === 'Closed');
  });

  test('concurrent first uses share one session; close() during the opening waits and ends it', async () => {
    const childrenBefore = new Set(fnboxChildren());
    const sb = new FnboxSandbox({ binary });
    const results = await Promise.all([sb.execute('echo 1'), sb.execute('echo 2'), sb.listFiles('/'), sb.open()]);
    assert.deepEqual([results[0].stdout, results[1].stdout], ['1\n', '2\n']);
    assert.equal(results[3], sb.sessionId);
    assert.equal(fnboxChildren().filter((p) => !childrenBefore.has(p)).length, 1);
    await sb.close();

    const sb2 = new FnboxSandbox({ binary });
    const opening = sb2.open();
    const closing = sb2.close();
    await opening; /* it opened... */
    await closing; /* ...and close() ended it */
    assert.deepEqual(fnboxChildren().filter((p) => !childrenBefore.has(p)), []);
  });

  test('sessionOptions are the session options: workdir, files', async () => {
    const sb = new FnboxSandbox({ binary, sessionOptions: { workdir: '/home/w', files: { 'seed.txt': 'seeded' }, idleTimeout: 60 } });
    try {
      const r = await sb.execute('pwd; cat seed.txt');
      assert.equal(r.stdout, '/home/w\nseeded');
      assert.equal(await sb.readText('seed.txt'), 'seeded');
      assert.equal(await sb.readText('/home/w/seed.txt'), 'seeded');
      assert.match(sb.getTools()[1].description, /Working directory: \/home\/w\./);
    } finally {
      await sb.close();
    }
  });

  test("a session option the server refuses is its InvalidRequest, and nothing is left", async () => {
    const childrenBefore = new Set(fnboxChildren());
    const dirsBefore = new Set(clientTempDirs());
    const sb = new FnboxSandbox({ binary, sessionOptions: { bogus: 1 } });
    const err = await rejection(sb.execute('echo x'));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'InvalidRequest');
    assert.match(err.message, /^bogus: unknown field/);
    assert.equal(err.status, 400);
    assert.deepEqual(fnboxChildren().filter((p) => !childrenBefore.has(p)), []);
    assert.deepEqual(clientTempDirs().filter((d) => !dirsBefore.has(d)), []);
    await sb.close();
  });

  test('a missing binary is an error at first use, not at construction', async () => {
    const sb = new FnboxSandbox({ binary: `/nonexistent/${marker('nobin')}` });
    assert.ok(sb instanceof Sandbox);
    const err = await rejection(sb.execute('echo x'));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'BinaryNotFound');
    assert.equal(err.code, 'ENOENT');
    await sb.close();
  });

  test('a process that exits without close() exits at once, and its server and temp directory go', async () => {
    const appRoot = fileURLToPath(new URL('..', import.meta.url));
    const m = marker('exit');
    const script = `
      import { readdirSync, readFileSync } from 'node:fs';
      import { FnboxSandbox } from 'fnbox/strands';
      const sb = new FnboxSandbox({ binary: ${JSON.stringify(binary)} });
      await sb.execute('echo ${m}');
      const kids = readdirSync('/proc').filter((e) => /^\\d+$/.test(e)).filter((e) => {
        try { const s = readFileSync('/proc/' + e + '/stat', 'utf8'); return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === process.pid; } catch { return false; }
      });
      const dirs = readdirSync(${JSON.stringify(tmpdir())}).filter((d) => d.startsWith('fnbox-client-'));
      console.log(JSON.stringify({ kids, dirs }));
    `;
    const dirsBefore = new Set(clientTempDirs());
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: appRoot, encoding: 'utf8', timeout: 20000 });
    assert.equal(child.status, 0, child.stderr);
    assert.ok(Date.now() - started < 10000, 'nothing kept the process alive');
    const { kids, dirs } = JSON.parse(child.stdout.trim().split('\n').at(-1));
    assert.equal(kids.length, 1, 'it had its private server');
    assert.ok(await waitFor(() => kids.every((pid) => spawnSync('kill', ['-0', String(pid)]).status !== 0)), 'the server died with it');
    const itsDirs = dirs.filter((d) => !dirsBefore.has(d));
    assert.deepEqual(clientTempDirs().filter((d) => itsDirs.includes(d)), [], 'its temp directory is gone');
  });
});

describe('remote mode (baseUrl)', () => {
  let server;
  let dir;
  let baseUrl;
  const token = `tok_${'x'.repeat(24)}_${process.pid}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fnbxstrands-remote-'));
    writeFileSync(join(dir, 'tokens'), `${token}\n`, { mode: 0o600 });
    server = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--token-file', join(dir, 'tokens'), '--grace', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.stderr.setEncoding('utf8');
    const address = await new Promise((resolve, reject) => {
      server.stderr.on('data', (t) => {
        log += t;
        const m = /"event":"listening","address":"([^"]+)"/.exec(log);
        if (m) resolve(m[1]);
      });
      server.on('exit', (code) => reject(new Error(`fnbox serve exited ${code}: ${log}`)));
    });
    baseUrl = `http://${address}`;
  });
  after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const api = (method, path, body) =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  test('with a token: opens a session, runs, and close() ends the session', async () => {
    const sb = new FnboxSandbox({ baseUrl, token });
    const m = marker('remote');
    assert.equal((await sb.execute(`echo ${m}`)).stdout, `${m}\n`);
    const id = sb.sessionId;
    assert.equal((await api('GET', `/v1/sessions/${id}`)).status, 200);
    await sb.close();
    assert.equal((await api('GET', `/v1/sessions/${id}`)).status, 404);
  });

  test('a wrong token is the server Unauthorized', async () => {
    const sb = new FnboxSandbox({ baseUrl, token: 'wrong-token-wrong-token' });
    const err = await rejection(sb.execute('echo x'));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'Unauthorized');
    assert.equal(err.status, 401);
    await sb.close();
  });

  test('session: works in an existing session, and close() leaves it open', async () => {
    const opened = await (await api('POST', '/v1/sessions', { files: { 'given.txt': 'from the owner' } })).json();
    const sb = new FnboxSandbox({ baseUrl, token, session: opened.id });
    assert.equal(sb.sessionId, opened.id);
    assert.equal((await sb.execute('cat given.txt')).stdout, 'from the owner');
    await sb.writeText('back.txt', 'from the sandbox');
    assert.match(sb.getTools()[1].description, new RegExp(`fnbox session ${opened.id}`));
    await sb.close();
    assert.equal((await api('GET', `/v1/sessions/${opened.id}`)).status, 200, 'still open');
    const read = await api('GET', `/v1/sessions/${opened.id}/files?path=back.txt`);
    assert.equal(await read.text(), 'from the sandbox');
    assert.equal((await api('DELETE', `/v1/sessions/${opened.id}`)).status, 204);
  });

  test('a session that is gone is NotFound (not ENOENT), for commands and files alike', async () => {
    const sb = new FnboxSandbox({ baseUrl, token, sessionOptions: { idleTimeout: 1 } });
    await sb.open();
    const gone = await waitFor(async () => (await api('GET', `/v1/sessions/${sb.sessionId}`)).status === 404, 5000, 200);
    assert.ok(gone, 'the idle session expired');
    for (const op of [() => sb.execute('echo x'), () => sb.readFile('/tmp/x'), () => sb.listFiles('/tmp')]) {
      const err = await rejection(op());
      assert.ok(err instanceof FnboxError, String(err));
      assert.equal(err.type, 'NotFound');
      assert.equal(err.code, undefined);
      assert.match(err.message, /^session '[0-9a-f]+': no such session/);
    }
    await sb.close(); /* already gone: nothing to end, no error */
  });

  test('attaching to an unknown session is NotFound at first use', async () => {
    const sb = new FnboxSandbox({ baseUrl, token, session: 'deadbeefdeadbeefdeadbeefdeadbeef' });
    const err = await rejection(sb.execute('echo x'));
    assert.equal(err.type, 'NotFound');
    await sb.close();
  });

  test('argument errors at construction: session without baseUrl, a bad baseUrl', () => {
    assert.throws(() => new FnboxSandbox({ session: 'abc' }), (e) => e instanceof FnboxError && e.type === 'InvalidArgument');
    assert.throws(() => new FnboxSandbox({ baseUrl: 'ftp://x' }), (e) => e instanceof FnboxError && e.type === 'InvalidArgument');
    assert.throws(() => new FnboxSandbox({ baseUrl, session: '../x' }), (e) => e instanceof FnboxError && e.type === 'InvalidArgument');
  });

  test('over a unix socket', async () => {
    const sockDir = mkdtempSync(join(tmpdir(), 'fnbxstrands-unix-'));
    const sock = join(sockDir, 's.sock');
    const unixServer = spawn(binary, ['serve', '--listen', `unix:${sock}`, '--grace', '0'], { stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      const sb = new FnboxSandbox({ baseUrl: `unix:${sock}` });
      let out;
      await waitFor(async () => {
        try {
          out = await sb.execute('echo via-unix');
          return true;
        } catch (err) {
          if (err.type !== 'ConnectionFailed') throw err;
          return false;
        }
      });
      assert.equal(out.stdout, 'via-unix\n');
      await sb.close();
    } finally {
      unixServer.kill('SIGTERM');
      await new Promise((r) => unixServer.once('exit', r));
      rmSync(sockDir, { recursive: true, force: true });
      await sleep(0);
    }
  });
});
