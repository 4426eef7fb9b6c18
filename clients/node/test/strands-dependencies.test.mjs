// FnboxSandbox with dependencies: `sessionOptions.dependencies` installs the packages once for the session
// (from the index of the environments file's "host" entry, `environments` giving local mode's private
// `fnbox serve --environments FILE`), and its commands and kernels import them; an environment without an
// index refuses the session with fnbox's InvalidRequest naming `dependencies`. The index is real: the
// integration suite's fixture wheels on loopback (test/package-index.mjs).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { FnboxSandbox } from 'fnbox/strands';
import { FIXDEP_VALUE, startPackageIndex } from './package-index.mjs';
import { fnboxBinary, rejection } from './strands-helpers.mjs';

const binary = fnboxBinary();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-strands-deps-'));
/* a cache of this file's own; a sandbox's init (nobody, under root) must pass its parents to open a layer */
fs.chmodSync(dir, 0o755);
process.env.FNBOX_CACHE_DIR = path.join(dir, 'cache');
const environments = path.join(dir, 'environments.json');
let index;
before(async () => {
  index = await startPackageIndex(path.join(dir, 'index'));
  fs.writeFileSync(environments, JSON.stringify({ environments: { host: { indexes: { python: index.url } }, bare: {} } }));
});
after(async () => {
  await index?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a session's dependencies are importable by its commands and its kernel", async () => {
  const sb = new FnboxSandbox({ binary, environments, sessionOptions: { dependencies: { python: ['fixdep==2.1.0'] } } });
  try {
    const r = await sb.execute('python3 -c "import fixdep; print(fixdep.VALUE)"');
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, `${FIXDEP_VALUE}\n`);
    const k = await sb.runCode('import fixdep\nfixdep.VALUE');
    assert.equal(k.result, FIXDEP_VALUE, JSON.stringify(k));
  } finally {
    await sb.close();
  }
});

test('no index for the environment refuses the session, naming dependencies', async () => {
  const sb = new FnboxSandbox({ binary, environments, sessionOptions: { environment: 'bare', dependencies: { python: ['fixdep'] } } });
  try {
    const err = await rejection(sb.execute('true'));
    assert.match(String(err.message), /dependencies\.python: no package index configured for environment bare: set `indexes\.python`/);
  } finally {
    await sb.close();
  }
});
