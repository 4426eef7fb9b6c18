#!/usr/bin/env node
// Installs clients/node the ways the README says, each into a fresh scratch app (mktemp), from a fresh
// checkout of the package (its files as git has them: no dist/, no node_modules/, as a clone has them),
// then runs test/install-checks.mjs inside the app with `node --test`: both entry points import and the
// seed's quick start runs against the real fnbox.
//
//   folder:  npm install <checkout>/clients/node          (npm links the folder; its prepare builds dist/)
//   tarball: (cd <checkout>/clients/node && npm pack), then npm install <tgz> @strands-agents/sdk
//
//   node test/install.run.mjs          both
//   node test/install.run.mjs --keep   keep the scratch directory (its path is printed)
//
// npm runs with --prefer-offline (its cache first, the registry for what it lacks). FNBOX_BIN names the
// fnbox binary (default: the repo's build/fnbox). Prints node's TAP output of each app's run, then the
// totals (`# pass N`, `# fail M`); exits 1 on a failure.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './processes.mjs';

if (process.env.NODE_TEST_CONTEXT) {
  /* `node --test test/` runs every file under test/ on Node 20: this runner is not a test file. */
  console.log('# install.run.mjs: a runner, not a test (run it with node test/install.run.mjs)');
  process.exit(0);
}

const testDir = dirname(fileURLToPath(import.meta.url));
const pkgDir = dirname(testDir);
const repoDir = dirname(dirname(pkgDir));
const keep = process.argv.includes('--keep');
/* The SDK version the strands tests pin (test/strands-app): in npm's cache once those ran. */
const SDK = '@strands-agents/sdk@1.16.0';
const npmQuiet = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * A fresh checkout of clients/node at dest/clients/node: the files git tracks or would track (ignored ones,
 * dist/ and node_modules/ among them, left out), as they are in the work tree. Outside a git work tree: the
 * folder without dist/, node_modules/ and tarballs.
 */
function freshCheckout(dest) {
  const to = join(dest, 'clients', 'node');
  mkdirSync(to, { recursive: true });
  const git = spawnSync('git', ['-C', pkgDir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard', '.'], { encoding: 'utf8' });
  if (git.status === 0 && git.stdout) {
    for (const rel of git.stdout.split('\0').filter(Boolean)) {
      if (!existsSync(join(pkgDir, rel))) continue; /* deleted in the work tree */
      mkdirSync(dirname(join(to, rel)), { recursive: true });
      copyFileSync(join(pkgDir, rel), join(to, rel));
    }
  } else {
    cpSync(pkgDir, to, {
      recursive: true,
      filter: (src) => !/^(dist|node_modules)(\/|$)|\.tgz$/.test(relative(pkgDir, src)),
    });
  }
  for (const gone of ['dist', 'node_modules']) {
    if (existsSync(join(to, gone))) throw new Error(`the fresh checkout has ${gone}/`);
  }
  return to;
}

/** A scratch app (`npm init -y`) with the checks in its test/. */
async function scratchApp(dir) {
  mkdirSync(join(dir, 'test'), { recursive: true });
  await run('npm', ['init', '-y', '--loglevel=error'], { cwd: dir });
  copyFileSync(join(testDir, 'install-checks.mjs'), join(dir, 'test', 'install.test.mjs'));
}

async function main() {
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const binary = process.env.FNBOX_BIN || join(repoDir, 'build', 'fnbox');
  if (!existsSync(binary)) throw new Error(`no fnbox binary at ${binary} (build it with make, or set FNBOX_BIN)`);

  const root = mkdtempSync(join(tmpdir(), 'fnbox-install-run-'));
  let failed = false;
  try {
    /* The README's command: a folder. The checkout has no dist/ and no TypeScript: prepare makes both. */
    const folder = async () => {
      const pkg = freshCheckout(join(root, 'checkout-folder', 'fnbox'));
      const dir = join(root, 'app-folder');
      await scratchApp(dir);
      await run('npm', ['install', ...npmQuiet, pkg], { cwd: dir });
      return { dir, how: `npm install ${pkg}` };
    };
    /* A packed tarball, packed in another fresh checkout (prepare builds dist/ there), with the SDK. */
    const tarball = async () => {
      const pkg = freshCheckout(join(root, 'checkout-pack', 'fnbox'));
      const packed = (await run('npm', ['pack', ...npmQuiet], { cwd: pkg })).out.trim().split('\n').pop();
      const tgz = join(pkg, packed);
      if (!packed.endsWith('.tgz') || !existsSync(tgz)) throw new Error(`npm pack printed ${JSON.stringify(packed)}, no tarball`);
      const dir = join(root, 'app-tarball');
      await scratchApp(dir);
      await run('npm', ['install', ...npmQuiet, tgz, SDK], { cwd: dir });
      return { dir, how: `(cd ${pkg} && npm pack) && npm install ${tgz} ${SDK}` };
    };

    const totals = [];
    for (const [mode, install] of [['folder', folder], ['tarball', tarball]]) {
      let app;
      try {
        app = await install();
      } catch (err) {
        console.log(`# ---- ${mode}: the install failed (${elapsed()})\n${String(err.message).replace(/^/gm, '#   ')}`);
        totals.push({ mode, pass: 0, fail: 1, skipped: 0, code: 1 });
        failed = true;
        continue;
      }
      console.log(`# ---- ${mode}: ${app.how} (in ${app.dir}; ${elapsed()})`);
      const env = { ...process.env, FNBOX_BIN: binary, FNBOX_INSTALL_APP: app.dir, FNBOX_INSTALL_MODE: mode };
      delete env.NODE_OPTIONS;
      const res = await run(process.execPath, ['--test', '--test-reporter=tap', '--test-concurrency=1', join('test', 'install.test.mjs')], {
        cwd: app.dir,
        env,
        echo: true,
        allowFailure: true,
      });
      const count = (key) => Number((new RegExp(`^# ${key} (\\d+)$`, 'm').exec(res.out) ?? [])[1] ?? NaN);
      const t = { mode, pass: count('pass'), fail: count('fail'), skipped: count('skipped'), code: res.code };
      totals.push(t);
      if (res.code !== 0 || !(t.fail === 0) || !(t.pass > 0) || t.skipped > 0) failed = true;
    }

    console.log('# ==== install tests');
    for (const t of totals) console.log(`# ${t.mode}: pass ${t.pass}, fail ${t.fail}, skipped ${t.skipped}${t.code !== 0 ? ` (node --test exit ${t.code})` : ''}`);
    console.log(`# pass ${totals.reduce((s, t) => s + (t.pass || 0), 0)}`);
    console.log(`# fail ${totals.reduce((s, t) => s + (Number.isNaN(t.fail) ? 1 : t.fail), 0)}`);
    console.log(`# skipped ${totals.reduce((s, t) => s + (t.skipped || 0), 0)}`);
    console.log(`# ${elapsed()}`);
  } finally {
    if (keep) console.log(`# kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`install.run.mjs: ${err.stack ?? err}`);
    /* the summary lines scripts/test.sh counts: the install itself failed */
    console.log('# pass 0\n# fail 1');
    process.exit(1);
  },
);
