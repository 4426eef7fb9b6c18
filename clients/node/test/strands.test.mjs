// FnboxSandbox's Strands semantics against the real fnbox (a private `fnbox serve`) and the real SDK:
// streaming, exit codes, timeouts, cancellation, validation, files. Run by test/strands.run.mjs inside a
// scratch app that installed the packed tarball (or in place: node --test test/strands.test.mjs).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  PosixShellSandbox,
  Sandbox,
  SandboxAbortError,
  SandboxPathNotFoundError,
  SandboxTimeoutError,
} from '@strands-agents/sdk';
import { FnboxError, FnboxSandbox, MAX_TIMEOUT_SECONDS } from 'fnbox/strands';
import { collect, fnboxBinary, marker, processesWith, rejection, sleep, waitFor } from './strands-helpers.mjs';

const binary = fnboxBinary();
let sb;

before(async () => {
  sb = new FnboxSandbox({ binary });
  await sb.open();
});
after(async () => {
  await sb?.close();
});

/** The SDK's own answer for a bad language name: a PosixShellSandbox checks it before it runs anything. */
class ProbeSandbox extends PosixShellSandbox {
  ran = [];
  async *executeStreaming(command) {
    this.ran.push(command);
    yield { type: 'executionResult', exitCode: 0, stdout: '', stderr: '', outputFiles: [] };
  }
}

describe('shape', () => {
  test('is the SDK Sandbox (one SDK copy) and vends sandbox_file_editor and sandbox_shell', () => {
    assert.ok(sb instanceof Sandbox);
    const tools = sb.getTools();
    assert.deepEqual(tools.map((t) => t.name), ['sandbox_file_editor', 'sandbox_shell']);
    assert.match(tools[1].description, /fnbox/);
  });

  test('streams chunks as output arrives, then exactly one executionResult', async () => {
    const m = marker('stream');
    const run = await collect(sb.executeStreaming(`echo first_${m}; sleep 0.4; echo warn_${m} >&2; sleep 0.4; echo last_${m}`));
    assert.equal(run.results.length, 1);
    assert.equal(run.items.at(-1).item.type, 'executionResult');
    assert.deepEqual(Object.keys(run.result).sort(), ['exitCode', 'outputFiles', 'stderr', 'stdout', 'type']);
    assert.deepEqual(run.result, {
      type: 'executionResult',
      exitCode: 0,
      stdout: `first_${m}\nlast_${m}\n`,
      stderr: `warn_${m}\n`,
      outputFiles: [],
    });
    for (const c of run.chunks) {
      assert.deepEqual(Object.keys(c).sort(), ['data', 'streamType', 'type']);
      assert.equal(c.type, 'streamChunk');
    }
    assert.deepEqual(
      run.chunks.map((c) => [c.streamType, c.data]),
      [
        ['stdout', `first_${m}\n`],
        ['stderr', `warn_${m}\n`],
        ['stdout', `last_${m}\n`],
      ],
    );
    /* the first chunk came while the command still ran */
    const firstAt = run.items[0].at;
    const resultAt = run.items.at(-1).at;
    assert.ok(resultAt - firstAt >= 600, `first chunk at ${firstAt} ms, result at ${resultAt} ms`);
  });

  test('execute() and executeCode() (the SDK base class) return the result', async () => {
    const r = await sb.execute('printf abc');
    assert.deepEqual(r, { type: 'executionResult', exitCode: 0, stdout: 'abc', stderr: '', outputFiles: [] });
    const c = await sb.executeCode('print(6 * 7)', 'python3');
    assert.equal(c.stdout, '42\n');
    assert.equal(c.exitCode, 0);
  });
});

describe('exit codes', () => {
  test('a non-zero exit is returned, not thrown', async () => {
    const r = await sb.execute('echo out; echo err >&2; exit 3');
    assert.deepEqual(r, { type: 'executionResult', exitCode: 3, stdout: 'out\n', stderr: 'err\n', outputFiles: [] });
  });

  test('127 for a missing command', async () => {
    const r = await sb.execute(`nosuchcommand_${marker('missing')}`);
    assert.equal(r.exitCode, 127);
    assert.match(r.stderr, /not found/);
  });

  test('127 for a missing interpreter, through the code route and through stdin', async () => {
    const viaStdin = await sb.executeCode('print(1)', 'nosuchinterp_fnbxstrands');
    assert.equal(viaStdin.exitCode, 127);
    assert.equal(viaStdin.stderr, 'Language interpreter not found: nosuchinterp_fnbxstrands\n');
    assert.equal(viaStdin.stdout, '');
  });

  test('128 + n for a signal: kill -9 $$ is 137, kill -TERM $$ is 143', async () => {
    assert.equal((await sb.execute(`echo ${marker('kill9')}; kill -9 $$`)).exitCode, 137);
    assert.equal((await sb.execute(`echo ${marker('kill15')}; kill -TERM $$`)).exitCode, 143);
    const code = await sb.executeCode('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)', 'python3');
    assert.equal(code.exitCode, 137);
  });
});

describe('code', () => {
  test('python3, python, node, sh, bash through the code route, with env and cwd', async () => {
    const env = { FNBX_STRANDS_VAR: 'v1' };
    const py = await sb.executeCode('import os\nprint(os.environ["FNBX_STRANDS_VAR"], os.getcwd())', 'python3', { env, cwd: '/tmp' });
    assert.deepEqual([py.exitCode, py.stdout], [0, 'v1 /tmp\n']);
    assert.equal((await sb.executeCode('print("py")', 'python')).stdout, 'py\n');
    const js = await sb.executeCode('console.log(process.env.FNBX_STRANDS_VAR, 40 + 2)', 'node', { env });
    assert.deepEqual([js.exitCode, js.stdout], [0, 'v1 42\n']);
    assert.equal((await sb.executeCode('echo "$FNBX_STRANDS_VAR"', 'sh', { env })).stdout, 'v1\n');
    assert.equal((await sb.executeCode('echo "${BASH_VERSION:+bash}"', 'bash')).stdout, 'bash\n');
  });

  test('another interpreter reads the code on stdin (as the SDK sandboxes run it)', async () => {
    const r = await sb.executeCode('echo "dash:$FNBX_STRANDS_VAR"; exit 4', 'dash', { env: { FNBX_STRANDS_VAR: 'x' } });
    assert.deepEqual([r.exitCode, r.stdout], [4, 'dash:x\n']);
  });

  test('code streams too, and a failure is an exit status', async () => {
    const run = await collect(sb.executeCodeStreaming('import sys\nprint("a", flush=True)\nsys.exit(5)', 'python3'));
    assert.equal(run.result.exitCode, 5);
    assert.deepEqual(run.chunks, [{ type: 'streamChunk', data: 'a\n', streamType: 'stdout' }]);
  });
});

describe('timeouts', () => {
  test('throws SandboxTimeoutError with the partial output, the command killed', async () => {
    const m = marker('timeout');
    const started = Date.now();
    const seen = [];
    const err = await rejection(
      (async () => {
        for await (const c of sb.executeStreaming(`echo partial_${m}; echo e_${m} >&2; sleep 30; echo never`, { timeout: 1 })) seen.push(c);
      })(),
    );
    assert.ok(err instanceof SandboxTimeoutError, String(err));
    assert.equal(err.name, 'SandboxTimeoutError');
    assert.equal(err.message, 'Execution timed out after 1 seconds');
    assert.equal(err.stdout, `partial_${m}\n`);
    assert.equal(err.stderr, `e_${m}\n`);
    assert.ok(Date.now() - started < 8000);
    assert.deepEqual(seen.map((c) => c.data), [`partial_${m}\n`, `e_${m}\n`]);
    assert.ok(await waitFor(() => processesWith(`partial_${m}`).length === 0), 'the command is gone');
  });

  test('code times out the same way (fractional seconds)', async () => {
    const err = await rejection(sb.executeCode('import time\nprint("p", flush=True)\ntime.sleep(30)', 'python3', { timeout: 0.5 }));
    assert.ok(err instanceof SandboxTimeoutError);
    assert.equal(err.message, 'Execution timed out after 0.5 seconds');
    assert.equal(err.stdout, 'p\n');
  });

  test(`no timeout runs with the server's maximum (${MAX_TIMEOUT_SECONDS} s); more is the server's InvalidRequest`, async () => {
    assert.equal(MAX_TIMEOUT_SECONDS, 3600);
    assert.equal((await sb.execute('echo ok')).stdout, 'ok\n');
    const err = await rejection(sb.execute('echo never', { timeout: MAX_TIMEOUT_SECONDS + 1 }));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'InvalidRequest');
    assert.match(err.message, /^timeout: /);
  });
});

describe('cancellation', () => {
  test('a signal aborted before: SandboxAbortError, nothing runs (not even a session)', async () => {
    const fresh = new FnboxSandbox({ binary });
    const ac = new AbortController();
    ac.abort();
    const m = marker('prearmed');
    const err = await rejection(fresh.execute(`touch /tmp/${m}`, { signal: ac.signal }));
    assert.ok(err instanceof SandboxAbortError);
    assert.equal(err.message, 'Execution aborted');
    assert.equal(fresh.sessionId, undefined);
    await fresh.close();
    const err2 = await rejection(sb.execute(`touch /tmp/${m}`, { signal: ac.signal }));
    assert.ok(err2 instanceof SandboxAbortError);
    const code = await rejection(sb.executeCode(`open("/tmp/${m}", "w")`, 'python3', { signal: ac.signal }));
    assert.ok(code instanceof SandboxAbortError);
    await assert.rejects(sb.readFile(`/tmp/${m}`), (e) => e.code === 'ENOENT');
  });

  test('aborting during: SandboxAbortError at once, and the command is killed', async () => {
    const m = marker('abort');
    const hb = `/tmp/hb_${m}`;
    const ac = new AbortController();
    const seen = [];
    const started = Date.now();
    const err = await rejection(
      (async () => {
        for await (const c of sb.executeStreaming(`echo started_${m}; while :; do date +%s%N > ${hb}; sleep 0.05; done`, { signal: ac.signal })) {
          seen.push(c);
          if (c.type === 'streamChunk') {
            assert.ok(processesWith(`started_${m}`).length > 0, 'the command runs (and can be seen from here)');
            setTimeout(() => ac.abort(), 200);
          }
        }
      })(),
    );
    assert.ok(err instanceof SandboxAbortError, String(err));
    assert.ok(Date.now() - started < 5000);
    assert.equal(seen[0].data, `started_${m}\n`);
    assert.ok(await waitFor(() => processesWith(`started_${m}`).length === 0), 'no process of the command is left');
    const a = await sb.readText(hb);
    await sleep(300);
    assert.equal(await sb.readText(hb), a, 'the heartbeat stopped');
  });

  test('aborting code during a run', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const err = await rejection(sb.executeCode('import time\ntime.sleep(20)  # fnbxstrands_code_abort', 'python3', { signal: ac.signal }));
    assert.ok(err instanceof SandboxAbortError);
    assert.ok(await waitFor(() => processesWith('fnbxstrands_code_abort').length === 0));
  });

  test('leaving a stream early kills the command', async () => {
    const m = marker('leave');
    for await (const c of sb.executeStreaming(`echo go_${m}; sleep 20`)) {
      assert.equal(c.data, `go_${m}\n`);
      assert.ok(processesWith(`go_${m}`).length > 0, 'the command runs');
      break;
    }
    assert.ok(await waitFor(() => processesWith(`go_${m}`).length === 0), 'the command is gone');
  });
});

describe('validation', () => {
  test('invalid env keys throw the SDK message before anything runs', async () => {
    const fresh = new FnboxSandbox({ binary });
    const m = marker('badenv');
    for (const key of ['1BAD', 'A-B', 'A B', 'X;touch /tmp/x', '']) {
      const err = await rejection(fresh.execute(`touch /tmp/${m}`, { env: { GOOD: '1', [key]: 'v' } }));
      assert.ok(err instanceof Error);
      assert.equal(err.message, `Invalid environment variable name: ${key}`);
      const code = await rejection(fresh.executeCode('print(1)', 'python3', { env: { [key]: 'v' } }));
      assert.equal(code.message, `Invalid environment variable name: ${key}`);
    }
    assert.equal(fresh.sessionId, undefined, 'no session was opened');
    await fresh.close();
  });

  test('invalid language names throw the SDK message before anything runs', async () => {
    const fresh = new FnboxSandbox({ binary });
    const probe = new ProbeSandbox();
    for (const lang of ['py thon', 'python3;id', '../bin/sh', 'sh|x', '']) {
      const ours = await rejection(fresh.executeCode('print(1)', lang));
      const sdks = await rejection(probe.executeCode('print(1)', lang));
      assert.equal(ours.message, `language parameter contains invalid characters: ${lang}`);
      assert.equal(ours.message, sdks.message);
    }
    assert.deepEqual(probe.ran, []);
    assert.equal(fresh.sessionId, undefined);
    await fresh.close();
  });

  test('env reaches the command; a missing cwd is made; one that cannot be is the server InvalidRequest', async () => {
    const r = await sb.execute('echo "$A_1:$B"; pwd', { env: { A_1: 'x y', B: "it's" }, cwd: '/tmp' });
    assert.equal(r.stdout, "x y:it's\n/tmp\n");
    const dir = `/tmp/nodir_${marker('cwd')}/below`;
    assert.equal((await sb.execute('pwd', { cwd: dir })).stdout, `${dir}\n`);
    const err = await rejection(sb.execute('pwd', { cwd: `/usr/nodir_${marker('cwd')}` }));
    assert.ok(err instanceof FnboxError);
    assert.equal(err.type, 'InvalidRequest');
    assert.match(err.message, /^cwd: /);
  });
});

describe('files', () => {
  test('writeFile creates parents; bytes round-trip', async () => {
    const dir = `/tmp/${marker('files')}`;
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await sb.writeFile(`${dir}/a/b/c.bin`, bytes);
    const back = await sb.readFile(`${dir}/a/b/c.bin`);
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual(Uint8Array.from(back), bytes);
    await sb.writeText(`${dir}/t.txt`, 'héllo €\n');
    assert.equal(await sb.readText(`${dir}/t.txt`), 'héllo €\n');
    assert.equal((await sb.execute(`cat ${dir}/t.txt`)).stdout, 'héllo €\n');
    await sb.writeFile(`${dir}/empty`, new Uint8Array());
    assert.equal((await sb.readFile(`${dir}/empty`)).length, 0);
    /* relative paths are the session's workdir's */
    await sb.writeText(`rel_${marker('rel')}.txt`, 'r');
    assert.match((await sb.execute('ls')).stdout, /rel_fnbxstrands_rel_/);
  });

  test('writeFile of a string writes its UTF-8 bytes, as writeText does (issue 29: it stored JSON-quoted text)', async () => {
    const dir = `/tmp/${marker('wstr')}`;
    await sb.writeFile(`${dir}/s.py`, 'print(1)\nprint("é €")\n');
    assert.equal(await sb.readText(`${dir}/s.py`), 'print(1)\nprint("é €")\n');
    const r = await sb.execute(`python3 ${dir}/s.py`);
    assert.deepEqual([r.exitCode, r.stdout, r.stderr], [0, '1\né €\n', '']);
    /* the SDK's own helpers over it agree: writeText, and the bytes of a Buffer */
    await sb.writeText(`${dir}/t.txt`, 'same');
    await sb.writeFile(`${dir}/u.txt`, 'same');
    await sb.writeFile(`${dir}/b.txt`, Buffer.from('same'));
    assert.equal((await sb.execute(`cat ${dir}/t.txt ${dir}/u.txt ${dir}/b.txt`)).stdout, 'samesamesame');
    await sb.writeFile(`${dir}/empty.txt`, '');
    assert.equal((await sb.readFile(`${dir}/empty.txt`)).length, 0);
  });

  test('writeFile of anything but a string or a Uint8Array is a TypeError, and writes nothing', async () => {
    const dir = `/tmp/${marker('wbad')}`;
    await sb.writeText(`${dir}/keep`, 'k');
    const bad = [
      [{ text: 'x' }, /got Object/],
      [42, /got number/],
      [null, /got null/],
      [undefined, /got undefined/],
      [new ArrayBuffer(4), /got ArrayBuffer/],
      [new Uint16Array(2), /got Uint16Array/],
      [['a'], /got Array/],
    ];
    for (const [content, message] of bad) {
      const err = await rejection(sb.writeFile(`${dir}/f`, content));
      assert.ok(err instanceof TypeError, `${String(content)}: ${err}`);
      assert.match(err.message, /^writeFile: content must be a Uint8Array or a string, /);
      assert.match(err.message, message);
    }
    assert.deepEqual((await sb.listFiles(dir)).map((f) => f.name), ['keep']);
  });

  test("missing files reject with code 'ENOENT'", async () => {
    const missing = `/tmp/missing_${marker('enoent')}`;
    const read = await rejection(sb.readFile(missing));
    assert.equal(read.code, 'ENOENT');
    assert.ok(read instanceof FnboxError);
    assert.equal(read.type, 'NotFound');
    const text = await rejection(sb.readText(missing));
    assert.equal(text.code, 'ENOENT');
    const rm = await rejection(sb.removeFile(missing));
    assert.equal(rm.code, 'ENOENT');
  });

  test('removeFile removes', async () => {
    const p = `/tmp/${marker('rm')}.txt`;
    await sb.writeText(p, 'x');
    await sb.removeFile(p);
    assert.equal((await rejection(sb.readFile(p))).code, 'ENOENT');
  });

  test('listFiles: entries with isDir and size; a missing path or a file throws SandboxPathNotFoundError', async () => {
    const dir = `/tmp/${marker('list')}`;
    await sb.writeText(`${dir}/b.txt`, 'four');
    await sb.writeText(`${dir}/sub/x`, '');
    await sb.writeText(`${dir}/.hidden`, '');
    const entries = await sb.listFiles(dir);
    assert.deepEqual(entries, [
      { name: '.hidden', isDir: false, size: 0 },
      { name: 'b.txt', isDir: false, size: 4 },
      { name: 'sub', isDir: true, size: entries[2].size },
    ]);
    for (const p of [`${dir}/nothing`, `${dir}/b.txt`, `${dir}/nothing/deeper`]) {
      const err = await rejection(sb.listFiles(p));
      assert.ok(err instanceof SandboxPathNotFoundError, `${p}: ${err}`);
      assert.equal(err.message, `Path not found: ${p}`);
    }
  });
});

describe('UTF-8', () => {
  test('a character split across writes comes out whole', async () => {
    const run = await collect(sb.executeStreaming("printf '\\303'; sleep 0.3; printf '\\251\\n'; printf '\\342\\202' >&2; sleep 0.3; printf '\\254' >&2"));
    assert.equal(run.result.stdout, 'é\n');
    assert.equal(run.result.stderr, '€');
    const out = run.chunks.filter((c) => c.streamType === 'stdout').map((c) => c.data).join('');
    const err = run.chunks.filter((c) => c.streamType === 'stderr').map((c) => c.data).join('');
    assert.equal(out, 'é\n');
    assert.equal(err, '€');
    for (const c of run.chunks) assert.ok(!c.data.includes('\uFFFD'), JSON.stringify(c.data));
  });

  test('much multibyte output: the chunks add up to stdout, no replacement characters', async () => {
    const run = await collect(
      sb.executeCodeStreaming('import sys\nfor i in range(2000):\n    sys.stdout.write("é€😀" * 50 + "\\n")\n    sys.stdout.flush()', 'python3'),
    );
    assert.equal(run.result.exitCode, 0);
    const out = run.chunks.map((c) => c.data).join('');
    assert.equal(out, run.result.stdout);
    assert.equal(out, ('é€😀'.repeat(50) + '\n').repeat(2000));
    assert.ok(!out.includes('\uFFFD'));
  });
});

describe('concurrency', () => {
  test('commands run side by side in one session and share its files', async () => {
    const m = marker('conc');
    const started = Date.now();
    const [a, b] = await Promise.all([
      sb.execute(`sleep 1; echo a_${m} > /tmp/${m}.a; echo a`),
      sb.execute(`sleep 1; echo b_${m} > /tmp/${m}.b; echo b`),
    ]);
    assert.deepEqual([a.stdout, b.stdout], ['a\n', 'b\n']);
    assert.ok(Date.now() - started < 1900, 'they ran at once (one after the other takes 2 s)');
    assert.equal((await sb.execute(`cat /tmp/${m}.a /tmp/${m}.b`)).stdout, `a_${m}\nb_${m}\n`);
  });
});
