// How a registry user has fnbox/strands: the packed tarball installed into an app with its own
// @strands-agents/sdk loads exactly that one SDK copy (so instanceof and the SDK's error classes hold) and
// never brings one of its own. The install checks run inside the scratch app of test/strands.run.mjs
// (FNBOX_STRANDS_APP); in place only the shared-copy check runs.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import * as sdk from '@strands-agents/sdk';
import { FnboxSandbox } from 'fnbox/strands';
import { fnboxBinary } from './strands-helpers.mjs';

const app = process.env.FNBOX_STRANDS_APP;
const inApp = { skip: app ? false : 'not in the scratch app (run test/strands.run.mjs)' };

/** Every installed @strands-agents/sdk under dir's node_modules, at any depth. */
function sdkCopies(nodeModules) {
  const found = [];
  const walk = (dir, depth) => {
    if (depth > 8 || !existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name.startsWith('@')) {
        for (const sub of readdirSync(path)) {
          const p = join(path, sub);
          if (name === '@strands-agents' && sub === 'sdk') found.push(p);
          walk(join(p, 'node_modules'), depth + 1);
        }
      } else if (!name.startsWith('.')) {
        walk(join(path, 'node_modules'), depth + 1);
      }
    }
  };
  walk(nodeModules, 0);
  return found;
}

describe('one SDK copy', () => {
  test('fnbox/strands and this test load the same @strands-agents/sdk', async () => {
    const fromTest = fileURLToPath(import.meta.resolve('@strands-agents/sdk'));
    const strandsFile = fileURLToPath(import.meta.resolve('fnbox/strands'));
    const fromPackage = createRequire(strandsFile).resolve('@strands-agents/sdk');
    assert.equal(realpathSync(fromPackage), realpathSync(fromTest));
    assert.ok(new FnboxSandbox() instanceof sdk.Sandbox);
  });

  test('the installed fnbox is the packed tarball, with no SDK and no node_modules of its own', inApp, () => {
    const pkgDir = join(app, 'node_modules', 'fnbox');
    assert.ok(lstatSync(pkgDir).isDirectory() && !lstatSync(pkgDir).isSymbolicLink(), 'a real install, not a link');
    assert.equal(realpathSync(fileURLToPath(import.meta.resolve('fnbox/strands'))), realpathSync(join(pkgDir, 'dist', 'strands.js')));
    assert.equal(existsSync(join(pkgDir, 'node_modules')), false, 'no node_modules/fnbox/node_modules');
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'fnbox');
    assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependencies');
    assert.equal(pkg.bundleDependencies ?? pkg.bundledDependencies, undefined);
    assert.ok(pkg.peerDependencies['@strands-agents/sdk']);
    assert.equal(pkg.peerDependenciesMeta['@strands-agents/sdk'].optional, true);
    assert.deepEqual(readdirSync(pkgDir).filter((n) => !/^(dist|package\.json|README.*|LICENSE.*)$/i.test(n)), []);
  });

  test('the app holds exactly one @strands-agents/sdk, the one both resolve to', inApp, () => {
    const copies = sdkCopies(join(app, 'node_modules'));
    assert.deepEqual(copies, [join(app, 'node_modules', '@strands-agents', 'sdk')]);
    const fromApp = createRequire(join(app, 'package.json')).resolve('@strands-agents/sdk');
    const fromFnbox = createRequire(join(app, 'node_modules', 'fnbox', 'dist', 'strands.js')).resolve('@strands-agents/sdk');
    assert.equal(fromFnbox, fromApp);
    assert.ok(fromApp.startsWith(copies[0] + '/'));
    const expected = process.env.FNBOX_STRANDS_SDK;
    const version = JSON.parse(readFileSync(join(copies[0], 'package.json'), 'utf8')).version;
    if (expected) assert.equal(version, expected);
    console.log(`@strands-agents/sdk ${version} under Node ${process.version}: ${dirname(fromApp)}`);
  });

  test("the SDK's errors are the SDK's classes", async () => {
    const sb = new FnboxSandbox({ binary: fnboxBinary() });
    try {
      await assert.rejects(sb.execute('sleep 5 # fnbxstrands_install_timeout', { timeout: 0.3 }), sdk.SandboxTimeoutError);
      await assert.rejects(sb.listFiles('/fnbxstrands_nowhere'), sdk.SandboxPathNotFoundError);
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(sb.execute('echo x', { signal: ac.signal }), sdk.SandboxAbortError);
    } finally {
      await sb.close();
    }
  });
});
