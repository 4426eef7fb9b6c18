// onStdout gets the output as the function writes it, with no flush in the function: three lines 0.8 s apart
// (Python, Ruby and C, whose runtimes buffer a pipe) reach the callback spread out as written, in local mode
// (`fnbox call --stream`) and remote mode (a test-started `fnbox serve`, NDJSON). Only arrival spacing with a
// wide margin is checked (the first line at least 0.5 s before the last, 1.6 s when streamed, 0 when the output
// is held until the end), so a loaded machine does not flake. Against the real build/fnbox (FNBOX_BIN).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createExecutor } from 'fnbox';
import { startServer } from './processes.mjs';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repo = path.resolve(pkgDir, '../..');
const FNBOX = process.env.FNBOX_BIN || path.join(repo, 'build/fnbox');
process.env.FNBOX_BIN = FNBOX; /* local mode finds fnbox through it */

const GAP_MS = 800; /* the functions' sleep between lines */
const SPREAD_MS = 500; /* what the first line must lead the last by, at least */

const FUNCTIONS = {
  python: `import time\ndef f():\n    for i in range(3):\n        print('L%d' % i)\n        time.sleep(${GAP_MS / 1000})\n    return 3\n`,
  ruby: `def f\n  3.times { |i| puts "L#{i}"; sleep ${GAP_MS / 1000} }\n  3\nend\n`,
  c: `#include <stdio.h>\n#include <unistd.h>\nint f(void) { for (int i = 0; i < 3; i++) { printf("L%d\\n", i); usleep(${GAP_MS * 1000}); } return 3; }\n`,
};

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fnbox-node-stream-'));
let server;

before(async () => {
  server = await startServer(FNBOX, root);
});

after(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  fs.rmSync(root, { recursive: true, force: true });
});

/** When each of L0, L1, L2 reached onStdout (ms, performance.now()), checking the chunks join to the result. */
function arrivals(chunks, stdout) {
  assert.equal(chunks.map((c) => c.data).join(''), stdout);
  assert.equal(stdout, 'L0\nL1\nL2\n');
  const when = {};
  let text = '';
  for (const { t, data } of chunks) {
    text += data;
    for (const line of ['L0', 'L1', 'L2']) if (!(line in when) && text.includes(`${line}\n`)) when[line] = t;
  }
  return when;
}

for (const mode of ['local', 'remote']) {
  describe(`${mode} mode`, () => {
    const make = () => (mode === 'local' ? createExecutor({}) : createExecutor({ baseUrl: server.baseUrl, token: server.token }));

    for (const language of Object.keys(FUNCTIONS)) {
      test(`${language}: onStdout gets each line as it is written, without a flush`, async () => {
        const chunks = [];
        const result = await make().execute(
          { language, code: FUNCTIONS[language], functionName: 'f', timeout: 60 },
          { onStdout: (data) => chunks.push({ t: performance.now(), data }) },
        );
        assert.equal(result.status, 'success', JSON.stringify(result.error));
        assert.equal(result.result, 3);
        const when = arrivals(chunks, result.stdout);
        const lead = when.L2 - when.L0;
        assert.ok(
          lead >= SPREAD_MS,
          `L0 arrived only ${lead.toFixed(0)} ms before L2 (written ${2 * GAP_MS} ms apart): chunks ${JSON.stringify(chunks.map((c) => c.data))}`,
        );
      });
    }
  });
}
