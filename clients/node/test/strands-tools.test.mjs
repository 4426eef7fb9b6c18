// The SDK's own tools over a FnboxSandbox: its file editor (view / create / str_replace / insert), its shell
// tool, and `new Agent({ sandbox })` with a scripted model (the LLM is mocked; the agent, its tools and the
// sandbox are real).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from '@strands-agents/sdk';
import { fileEditor } from '@strands-agents/sdk/vended-tools/file-editor';
import { ShellExecutionError, ShellTimeoutError, makeShell } from '@strands-agents/sdk/vended-tools/shell';
import { FnboxSandbox } from 'fnbox/strands';
import { ScriptedModel, fnboxBinary, marker, toolContext } from './strands-helpers.mjs';

const binary = fnboxBinary();
let sb;
let editor;
let shell;

before(() => {
  sb = new FnboxSandbox({ binary });
  [editor, shell] = sb.getTools();
});
after(async () => {
  await sb?.close();
});

const edit = (input) => editor.invoke(input, toolContext(sb, editor.name, input));
const run = (input) => shell.invoke(input, toolContext(sb, shell.name, input));

describe('sandbox_file_editor (the SDK makeFileEditor bound to the sandbox)', () => {
  test('create, view, str_replace, insert, view_range, directory view', async () => {
    const dir = `/tmp/${marker('editor')}`;
    const file = `${dir}/notes/a.txt`;
    assert.equal(await edit({ command: 'create', path: file, file_text: 'one\ntwo\nthree' }), `File created successfully at: ${file}`);
    assert.equal(await sb.readText(file), 'one\ntwo\nthree');

    const view = await edit({ command: 'view', path: file });
    assert.equal(view, `Here's the result of running \`cat -n\` on ${file}:\n     1  one\n     2  two\n     3  three\n`);
    const range = await edit({ command: 'view', path: file, view_range: [2, 3] });
    assert.match(range, /^Here's the result.*\n     2  two\n     3  three\n$/);

    const replaced = await edit({ command: 'str_replace', path: file, old_str: 'two', new_str: 'TWO' });
    assert.match(replaced, new RegExp(`^The file ${file} has been edited\\.`));
    assert.equal(await sb.readText(file), 'one\nTWO\nthree');

    await edit({ command: 'insert', path: file, insert_line: 1, new_str: 'one and a half' });
    assert.equal(await sb.readText(file), 'one\none and a half\nTWO\nthree');
    assert.equal((await sb.execute(`cat ${file}`)).stdout, 'one\none and a half\nTWO\nthree');

    await edit({ command: 'create', path: `${dir}/notes/sub/b.txt`, file_text: 'b' });
    const listing = await edit({ command: 'view', path: dir });
    assert.equal(listing, `Here's the files and directories up to 2 levels deep in ${dir}, excluding hidden items:\nnotes\nnotes/a.txt\nnotes/sub\nnotes/sub/b.txt\n`);
  });

  test("the editor's own errors: existing file, missing path, no match, relative path", async () => {
    const dir = `/tmp/${marker('editor_err')}`;
    await sb.writeText(`${dir}/f.txt`, 'x\n');
    await assert.rejects(edit({ command: 'create', path: `${dir}/f.txt`, file_text: 'y' }), /File already exists at/);
    await assert.rejects(edit({ command: 'view', path: `${dir}/missing.txt` }), /does not exist/);
    await assert.rejects(edit({ command: 'view', path: `${dir}/missing/deeper.txt` }), /does not exist/);
    await assert.rejects(edit({ command: 'str_replace', path: `${dir}/f.txt`, old_str: 'zzz', new_str: 'y' }), /did not appear verbatim/);
    await assert.rejects(edit({ command: 'view', path: 'relative.txt' }), /is not an absolute path/);
    assert.equal(await sb.readText(`${dir}/f.txt`), 'x\n');
  });

  test("the SDK's shared fileEditor uses the agent's sandbox: a FnboxSandbox", async () => {
    const file = `/tmp/${marker('shared_editor')}.txt`;
    const input = { command: 'create', path: file, file_text: 'shared' };
    await fileEditor.invoke(input, toolContext(sb, 'fileEditor', input));
    assert.equal(await sb.readText(file), 'shared');
  });
});

describe('sandbox_shell (the SDK makeShell bound to the sandbox)', () => {
  test('runs the command in the session: output and error', async () => {
    const m = marker('shell');
    const out = await run({ command: `echo ${m} > /tmp/${m}; cat /tmp/${m}; echo warn >&2; exit 2` });
    assert.equal(out.output, `${m}\n`);
    assert.equal(out.error, 'warn\n');
    assert.equal(await sb.readText(`/tmp/${m}`), `${m}\n`);
    if ('exit_code' in out) assert.equal(out.exit_code, 2); /* SDK 1.19 reports it */
  });

  test('a timeout is the SDK ShellTimeoutError', async () => {
    const m = marker('shell_timeout');
    await assert.rejects(run({ command: `echo ${m}; sleep 20`, timeout: 0.5 }), (err) => {
      assert.ok(err instanceof ShellTimeoutError, String(err));
      assert.match(err.message, /^Execution timed out after 0\.5 seconds/);
      if (err.partial) assert.equal(err.partial.output, `${m}\n`); /* SDK 1.19 carries the partial output */
      return true;
    });
  });

  test("a server refusal is the SDK ShellExecutionError with fnbox's message", async () => {
    const input = { command: 'echo x', timeout: 4000 };
    await assert.rejects(shell.invoke(input, toolContext(sb, shell.name, input)), (err) => {
      assert.ok(err instanceof ShellExecutionError, String(err));
      assert.match(err.message, /^timeout: must be more than 0 and at most 3600 seconds/);
      return true;
    });
  });

  test('an unbound makeShell() uses the agent sandbox', async () => {
    const unbound = makeShell();
    const input = { command: 'echo unbound' };
    assert.equal((await unbound.invoke(input, toolContext(sb, 'shell', input))).output, 'unbound\n');
  });
});

describe('new Agent({ sandbox })', () => {
  test('the agent registers the sandbox tools and runs sandbox_shell and sandbox_file_editor through fnbox', async () => {
    const sandbox = new FnboxSandbox({ binary, sessionOptions: { workdir: '/home/agent' } });
    try {
      const m = marker('agent');
      const model = new ScriptedModel([
        { tool: 'sandbox_shell', input: { command: `echo ${m} | tee agent.txt; pwd; echo ok` } },
        { tool: 'sandbox_file_editor', input: { command: 'str_replace', path: '/home/agent/agent.txt', old_str: m, new_str: `${m}_edited` } },
        { text: 'all done' },
      ]);
      const agent = new Agent({ model, sandbox, printer: false });
      assert.equal(agent.sandbox, sandbox);
      const result = await agent.invoke('run it');
      assert.match(String(result), /all done/);
      /* registered at the agent's initialize (its first invoke) from sandbox.getTools() */
      assert.deepEqual(agent.tools.map((t) => t.name).sort(), ['sandbox_file_editor', 'sandbox_shell']);

      /* the model's second call holds the shell tool's result, the third the editor's */
      const toolResults = model.calls.map((msgs) => JSON.stringify(msgs.at(-1)));
      assert.equal(model.calls.length, 3);
      assert.match(toolResults[1], new RegExp(`${m}\\\\n/home/agent\\\\nok\\\\n`));
      assert.match(toolResults[1], /"status":"success"/);
      assert.match(toolResults[2], /has been edited/);
      assert.equal(await sandbox.readText('/home/agent/agent.txt'), `${m}_edited\n`);
    } finally {
      await sandbox.close();
    }
  });

  test('a failing tool call reaches the model as an error result, the agent goes on', async () => {
    const sandbox = new FnboxSandbox({ binary });
    try {
      const model = new ScriptedModel([
        { tool: 'sandbox_file_editor', input: { command: 'view', path: `/tmp/${marker('agent_missing')}` } },
        { text: 'handled' },
      ]);
      const agent = new Agent({ model, sandbox, printer: false });
      const result = await agent.invoke('look');
      assert.match(String(result), /handled/);
      const toolResult = JSON.stringify(model.calls[1].at(-1));
      assert.match(toolResult, /"status":"error"/);
      assert.match(toolResult, /does not exist/);
    } finally {
      await sandbox.close();
    }
  });
});
