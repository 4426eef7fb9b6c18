// FnboxSandbox.runCode / restartKernel: session kernels (state kept between runs) against a real fnbox serve.
// Run by test/strands.run.mjs inside the scratch apps (or in place: node --test test/strands-kernel.test.mjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { SandboxAbortError, SandboxTimeoutError } from '@strands-agents/sdk';
import { FnboxError, FnboxSandbox } from 'fnbox/strands';
import { fnboxBinary, marker, rejection } from './strands-helpers.mjs';

const binary = fnboxBinary();

describe('session kernels', () => {
  let server;
  let baseUrl;
  let a;
  let b;

  before(async () => {
    server = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--grace', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
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
    a = new FnboxSandbox({ baseUrl });
    b = new FnboxSandbox({ baseUrl });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
  });

  test('state persists between runs, per sandbox; the result is the last expression', async () => {
    let r = await a.runCode('import math\nx = 41\nx + 1');
    assert.deepEqual(r, { status: 'success', result: 42, error: undefined, stdout: '', stderr: '', exitCode: 0, kernelRestarted: false });
    r = await a.runCode("print('hi'); {'x': x, 'pi': round(math.pi, 2)}", { language: 'py' });
    assert.deepEqual([r.result, r.stdout], [{ x: 41, pi: 3.14 }, 'hi\n']);
    r = await b.runCode('x');
    assert.equal(r.status, 'error');
    assert.equal(r.error.type, 'NameError', 'another sandbox has its own kernel');
    r = await a.runCode('let y = 20; y + 1', { language: 'javascript' });
    assert.equal(r.result, 21);
    assert.equal((await a.runCode('[y * 2, typeof x]', { language: 'node' })).result[0], 40);
  });

  test("the code's exceptions are returned, not thrown; the state stays", async () => {
    let r = await a.runCode("raise ValueError('bad ' + str(x))");
    assert.deepEqual([r.status, r.exitCode, r.error.type, r.error.message, r.result], ['error', 1, 'ValueError', 'bad 41', undefined]);
    assert.match(r.error.stack, /Traceback/);
    r = await a.runCode("throw new TypeError('nope')", { language: 'js' });
    assert.deepEqual([r.status, r.error.type, r.error.message], ['error', 'TypeError', 'nope']);
    assert.equal((await a.runCode('x')).result, 41);
    const err = await rejection(a.runCode('1', { language: 'c' }));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'InvalidRequest');
  });

  test('kernel: false is a fresh process (executeCode stays stateless)', async () => {
    const r = await a.runCode('print(x)', { kernel: false });
    assert.equal(r.exitCode, 1);
    assert.match(r.stderr, /NameError/);
    assert.equal(r.kernelRestarted, false);
    assert.equal((await a.executeCode('print(1 + 1)', 'python')).stdout, '2\n');
  });

  test('onStdout / onStderr get the output as it comes', async () => {
    const events = [];
    const r = await a.runCode(
      "import sys, time\nprint('a', flush=True)\ntime.sleep(0.1)\nprint('b', file=sys.stderr, flush=True)\ntime.sleep(0.1)\nprint('c')\n7",
      { onStdout: (d) => events.push(['out', d]), onStderr: (d) => events.push(['err', d]) },
    );
    assert.deepEqual(events, [['out', 'a\n'], ['err', 'b\n'], ['out', 'c\n']]);
    assert.deepEqual([r.result, r.stdout, r.stderr], [7, 'a\nc\n', 'b\n']);
  });

  test('a timeout interrupts the code and keeps the state; restartKernel loses it', async () => {
    await a.runCode("import time\nkept = 'yes'");
    const m = marker('kernel_timeout');
    const start = Date.now();
    const err = await rejection(a.runCode(`print('early', flush=True)\nwhile True: time.sleep(0.01)  # ${m}`, { timeout: 0.4 }));
    assert.ok(err instanceof SandboxTimeoutError);
    assert.equal(err.stdout, 'early\n');
    assert.equal(err.kernelRestarted, false);
    assert.ok(Date.now() - start < 3000);
    assert.equal((await a.runCode('kept')).result, 'yes');
    await a.restartKernel('python');
    await b.restartKernel('javascript'); /* never started: nothing to do */
    assert.equal((await a.runCode('kept')).error.type, 'NameError');
    assert.equal((await a.runCode('y', { language: 'js' })).result, 20, 'the other language kept its kernel');
  });

  test('an aborted signal interrupts the code: SandboxAbortError, state kept', async () => {
    await a.runCode('import time\nstate = 5');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const m = marker('kernel_abort');
    const start = Date.now();
    const err = await rejection(a.runCode(`state = 6\nwhile True: time.sleep(0.01)  # ${m}`, { signal: ac.signal }));
    assert.ok(err instanceof SandboxAbortError);
    assert.ok(Date.now() - start < 2000);
    const r = await a.runCode('state');
    assert.equal(r.result, 6);
    assert.equal(r.kernelRestarted, false);
  });
});

describe('Ruby and PHP kernels, local mode (a private fnbox serve)', () => {
  let sb;
  before(() => {
    sb = new FnboxSandbox({ binary });
  });
  after(async () => {
    await sb?.close();
  });

  test('Ruby (ruby, rb): state persists, the last expression is the result, exceptions are returned', async () => {
    let r = await sb.runCode('r = 20\nputs "hi"', { language: 'ruby' });
    assert.deepEqual([r.status, r.stdout, r.kernelRestarted], ['success', 'hi\n', false]);
    r = await sb.runCode('r * 2 + 2', { language: 'rb' });
    assert.deepEqual(r, { status: 'success', result: 42, error: undefined, stdout: '', stderr: '', exitCode: 0, kernelRestarted: false });
    r = await sb.runCode('raise ArgumentError, "bad #{r}"', { language: 'ruby' });
    assert.deepEqual([r.status, r.exitCode, r.error.type, r.error.message], ['error', 1, 'ArgumentError', 'bad 20']);
    assert.equal((await sb.runCode('r', { language: 'ruby' })).result, 20);
    await sb.restartKernel('ruby');
    assert.equal((await sb.runCode('defined?(r).inspect', { language: 'ruby' })).result, 'nil');
  });

  test('PHP: state persists, the last expression is the result, exceptions are returned', async () => {
    let r = await sb.runCode('$p = 20; echo "hi\\n";', { language: 'php' });
    assert.deepEqual([r.status, r.stdout, r.kernelRestarted], ['success', 'hi\n', false]);
    r = await sb.runCode('$p * 2 + 2', { language: 'php' });
    assert.deepEqual(r, { status: 'success', result: 42, error: undefined, stdout: '', stderr: '', exitCode: 0, kernelRestarted: false });
    r = await sb.runCode('throw new RuntimeException("bad $p");', { language: 'php' });
    assert.deepEqual([r.status, r.exitCode, r.error.type, r.error.message], ['error', 1, 'RuntimeException', 'bad 20']);
    assert.equal((await sb.runCode('$p', { language: 'php' })).result, 20);
    await sb.restartKernel('php');
    assert.equal((await sb.runCode('isset($p)', { language: 'php' })).result, false);
  });
});
