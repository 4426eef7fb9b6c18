// Child processes the Node client's test files and runners share: a command run to its end, and a real
// `fnbox serve` on loopback with a token of its own. A module, not a test file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Runs a command; resolves to {code, out, err}, rejects with its output when it fails (unless
 *  options.allowFailure). options.echo: pass its output through as it comes. */
export function run(cmd, argv, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => {
      out += b;
      if (options.echo) process.stdout.write(b);
    });
    child.stderr.on('data', (b) => {
      err += b;
      if (options.echo) process.stderr.write(b);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0 || options.allowFailure) resolve({ code, out, err });
      else reject(new Error(`${cmd} ${argv.join(' ')} (in ${options.cwd ?? process.cwd()}) failed: ${signal ?? code}\n${out}${err}`));
    });
  });
}

/**
 * Starts `fnbox serve` (the binary fnbox) on 127.0.0.1, port 0, in cwd, with a fresh token written to
 * dir/tokens, and waits for its `listening` line. --warm none: tests count the server's processes, which a
 * warm pool's sandboxes would add to. extraArgs: more options (`--environments FILE`). Resolves to {child,
 * exited, token, baseUrl}.
 */
export async function startServer(fnbox, dir, cwd = dir, extraArgs = []) {
  const token = randomBytes(24).toString('hex');
  const tokenFile = path.join(dir, 'tokens');
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const child = spawn(fnbox, ['serve', '--listen', '127.0.0.1:0', '--token-file', tokenFile, '--warm', 'none', ...extraArgs], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr.setEncoding('utf8');
  const exited = new Promise((r) => child.on('exit', r));
  const first = await new Promise((resolve, reject) => {
    let buf = '';
    const onData = (text) => {
      buf += text;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      child.stderr.off('data', onData);
      child.stderr.on('data', () => {}); /* keep the log flowing */
      resolve(buf.slice(0, nl));
    };
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`fnbox serve exited with ${code} before listening: ${buf}`)));
  });
  const event = JSON.parse(first);
  assert.equal(event.event, 'listening');
  return { child, exited, token, baseUrl: `http://${event.address}` };
}
