// What a user of an installed `fnbox` package checks first: both entry points import, and the seed's
// quick start (@isdk/sandbox-executor's README, with the import changed to 'fnbox') runs against the real
// fnbox. test/install.run.mjs copies this file into scratch apps that installed the package as the README
// says (a folder, a packed tarball) and runs it there with `node --test`; FNBOX_INSTALL_APP names the app,
// FNBOX_INSTALL_MODE how the package came (`folder` or `tarball`). Anywhere else it skips.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const app = process.env.FNBOX_INSTALL_APP;
const mode = process.env.FNBOX_INSTALL_MODE;
const inApp = { skip: app ? false : 'not in a scratch app (run test/install.run.mjs)' };

describe('the installed package', inApp, () => {
  test('is in the app as the install left it, with dist/ built', () => {
    const dir = join(app, 'node_modules', 'fnbox');
    /* npm links a folder (install-links=false) and unpacks a tarball */
    assert.equal(lstatSync(dir).isSymbolicLink(), mode === 'folder', `node_modules/fnbox after a ${mode} install`);
    const real = realpathSync(dir);
    for (const f of ['index.js', 'index.d.ts', 'strands.js', 'strands.d.ts']) {
      assert.ok(existsSync(join(real, 'dist', f)), `${real}/dist/${f}`);
    }
  });

  test("import 'fnbox': the seed's quick start runs", async () => {
    const { createExecutor, SandboxExecutor, SyncStates } = await import('fnbox');
    assert.deepEqual(SyncStates, { CONTINUE: 'continue', SKIP: 'skip', ABORT: 'abort' });
    const executor = createExecutor();
    assert.ok(executor instanceof SandboxExecutor);
    assert.equal(executor.mode, 'local');

    // Python
    const result = await executor.execute({
      language: 'python',
      code: `
def greet(name, greeting="Hello"):
    return f"{greeting}, {name}!"
`,
      functionName: 'greet',
      args: ['World'],
      kwargs: { greeting: 'Hi' },
    });
    assert.equal(result.result, 'Hi, World!', JSON.stringify(result));

    // PHP (Supports automatic <?php tag injection)
    const phpResult = await executor.execute({
      language: 'php',
      code: `
function multiply($a, $b) {
  return $a * $b;
}
`,
      functionName: 'multiply',
      args: [6, 7],
    });
    assert.equal(phpResult.result, 42, JSON.stringify(phpResult));

    // JavaScript (Supports aliases: quickjs, js, javascript)
    const jsResult = await executor.execute({
      language: 'js',
      code: `
function calculate(a, b, options = {}) {
  const { multiplier = 1 } = options;
  return (a + b) * multiplier;
}
`,
      functionName: 'calculate',
      args: [5, 3],
      kwargs: { multiplier: 10 },
    });
    assert.equal(jsResult.result, 80, JSON.stringify(jsResult));

    // With Virtual Files
    const files = await executor.execute({
      language: 'python',
      code: `
def process(input_path, output_path):
    with open(input_path) as f:
        data = f.read()
    with open(output_path, 'w') as f:
        f.write(data.upper())
    return len(data)
`,
      functionName: 'process',
      args: ['/workspace/input.txt', '/workspace/output.txt'],
      files: {
        'input.txt': 'hello world',
      },
    });
    assert.equal(files.result, 11, JSON.stringify(files));
    assert.deepEqual(
      files.files?.created.map((c) => c.path),
      ['/workspace/output.txt'],
    );
  });

  test("import 'fnbox/strands': a sandbox runs a command", async () => {
    const { FnboxSandbox } = await import('fnbox/strands');
    if (mode === 'tarball') {
      /* the app's own SDK (a peer dependency): the one fnbox/strands extends */
      const sdk = await import('@strands-agents/sdk');
      assert.ok(new FnboxSandbox() instanceof sdk.Sandbox);
    }
    const sandbox = new FnboxSandbox();
    try {
      const r = await sandbox.execute('echo "hello from $(pwd)"', { timeout: 60 });
      assert.equal(r.exitCode, 0, JSON.stringify(r));
      assert.equal(r.stdout, 'hello from /workspace\n');
    } finally {
      await sandbox.close();
    }
  });
});
