// A real PEP 503 package index on loopback for the dependency tests (test/executor-dependencies.test.mjs,
// test/strands-dependencies.test.mjs); not a test file itself. The wheels and the server are the integration
// suite's own (tests/integration/registrylib.py: fixbase 1.0.0 and fixdep 2.1.0, which requires fixbase, built
// with Debian's pip from tests/integration/registries/python), run by a python3 child that lives until its
// stdin closes.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What fixdep's module says (`fixdep.VALUE`). */
export const FIXDEP_VALUE = 'fixdep 2.1.0 on base 1.0.0';

/** The repository: FNBOX_REPO (the strands runner's scratch apps sit outside it), else this file's. */
export function repoDir() {
  return process.env.FNBOX_REPO || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
}

/* Builds the wheels into argv[2]/wheels, serves argv[2]/site, prints the index's URL, waits for EOF. */
const SERVE = `
import pathlib, sys
sys.path.insert(0, sys.argv[1])
import registrylib
root = pathlib.Path(sys.argv[2])
server = registrylib.IndexServer(registrylib.simple_index(registrylib.build_wheels(root / "wheels"), root / "site"))
print(server.url, flush=True)
sys.stdin.read()
server.stop()
`;

/**
 * Starts the index with its files under dir (made here). Resolves to {url, stop()} once it
 * serves; `url` is the simple index (`http://127.0.0.1:PORT/simple/`).
 */
export async function startPackageIndex(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const lib = path.join(repoDir(), 'tests', 'integration');
  if (!fs.existsSync(path.join(lib, 'registrylib.py'))) throw new Error(`no registrylib.py in ${lib} (set FNBOX_REPO)`);
  const child = spawn('/usr/bin/python3', ['-c', SERVE, lib, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t) => (err = (err + t).slice(-4000)));
  const exited = new Promise((r) => child.on('exit', r));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (t) => {
      out += t;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.on('exit', (code) => reject(new Error(`the package index exited (${code}) before serving: ${err}`)));
  });
  return {
    url,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}
