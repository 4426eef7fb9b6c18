// FnboxSandbox in a named environment: `sessionOptions.environment` opens the session's sandbox there (its
// commands and kernels), `environments` gives local mode's private `fnbox serve --environments FILE`; an
// unknown name refuses the session with fnbox's InvalidRequest naming `environment`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FnboxSandbox } from 'fnbox/strands';
import { fnboxBinary, rejection } from './strands-helpers.mjs';

const binary = fnboxBinary();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-strands-env-'));
const environments = path.join(dir, 'environments.json');
fs.writeFileSync(environments, JSON.stringify({ environments: { plain: {} } }));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a session in a named environment runs commands and kernels', async () => {
  const sb = new FnboxSandbox({ binary, environments, sessionOptions: { environment: 'plain' } });
  try {
    const r = await sb.execute('echo in-plain');
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, 'in-plain\n');
    const k = await sb.runCode('6 * 7');
    assert.equal(k.result, 42);
  } finally {
    await sb.close();
  }
});

test('an unknown environment refuses the session, naming it', async () => {
  const sb = new FnboxSandbox({ binary, environments, sessionOptions: { environment: 'gpu' } });
  try {
    const err = await rejection(sb.execute('true'));
    assert.match(String(err.message), /environment: unknown environment "gpu" \(known: plain\)/);
  } finally {
    await sb.close();
  }
});
