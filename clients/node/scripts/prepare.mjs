#!/usr/bin/env node
// npm's `prepare` script: builds dist/ (TypeScript) wherever npm prepares this package from source.
//
// npm runs `prepare` for `npm install /path/to/fnbox/clients/node` (a link to the folder), for `npm pack`
// and `npm publish`, and after `npm install` / `npm ci` here. Only the last has this package's
// devDependencies: npm does not install the dependencies of a linked folder outside the app, so a fresh
// clone has neither dist/ nor TypeScript. Then this script installs the committed lock's devDependencies
// here first (`npm ci --prefer-offline`: from npm's cache when it holds them, else the registry), as npm
// itself does for a git dependency before its `prepare`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = dirname(dirname(fileURLToPath(import.meta.url)));
/* What tsc needs: itself, Node's types and the SDK's types (src/strands.ts imports the SDK). */
const NEEDED = ['typescript/bin/tsc', '@types/node/package.json', '@strands-agents/sdk/package.json'];

/**
 * The environment for the nested npm: the outer npm passes its own command's settings down as npm_config_*
 * (`--global`, `--prefix`, `--save`, `--omit=dev`, `--install-links`, ...), which would install somewhere else
 * or leave the devDependencies out. Keep only where packages come from and how they are fetched.
 */
function nestedEnv() {
  const keep = /^npm_config_(cache|registry|offline|prefer_offline|prefer_online|userconfig|globalconfig|proxy|https_proxy|noproxy|no_proxy|strict_ssl|cafile|ca|cert|key|fetch_.*|loglevel|.*:.*)$/i;
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) || keep.test(k)) env[k] = v;
  }
  return env;
}

function run(cmd, args, env = process.env) {
  /* stdout to stderr: `npm pack` prints the tarball's name on its stdout, and only that. */
  const r = spawnSync(cmd, args, { cwd: pkgDir, env, stdio: ['ignore', 2, 2] });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${pkgDir}) failed: ${r.signal ?? `exit ${r.status}`}`);
}

function main() {
  const modules = join(pkgDir, 'node_modules');
  if (!NEEDED.every((p) => existsSync(join(modules, p)))) {
    console.error(`fnbox: installing the build's devDependencies in ${pkgDir} (npm ci --prefer-offline)`);
    /* --ignore-scripts: this package's own prepare must not run again inside the nested install. */
    run('npm', ['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], nestedEnv());
  }
  run(process.execPath, [join(modules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json']);
}

try {
  main();
} catch (err) {
  console.error(`fnbox: building dist/ failed: ${err.message}`);
  process.exit(1);
}
