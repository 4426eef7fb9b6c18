// Helpers of the strands tests (test/strands*.test.mjs); not a test file itself. The tests import
// `fnbox/strands` and `@strands-agents/sdk` by name, so they run against one SDK copy: inside the scratch
// app test/strands.run.mjs installs the packed tarball into, or in place (the package's self-reference and
// its devDependency SDK).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Model } from '@strands-agents/sdk';

/** The fnbox binary: FNBOX_BIN, else the repo's build/fnbox (in place). */
export function fnboxBinary() {
  if (process.env.FNBOX_BIN) return process.env.FNBOX_BIN;
  const inRepo = fileURLToPath(new URL('../../../build/fnbox', import.meta.url));
  if (existsSync(inRepo)) return inRepo;
  throw new Error('set FNBOX_BIN to the fnbox binary (build it with `make` at the repo root)');
}

let counter = 0;
/** A string no other suite's command line contains: other suites look for stray processes by text. */
export function marker(tag) {
  counter += 1;
  return `fnbxstrands_${tag}_${process.pid}_${counter}`;
}

/** Runs a streaming execution to its end: the chunks, the result, and when each item came (ms). */
export async function collect(iterable) {
  const items = [];
  const start = Date.now();
  for await (const item of iterable) items.push({ item, at: Date.now() - start });
  const chunks = items.filter((x) => x.item.type === 'streamChunk').map((x) => x.item);
  const results = items.filter((x) => x.item.type === 'executionResult').map((x) => x.item);
  return { items, chunks, results, result: results[0] };
}

/** Host processes whose command line contains text (fnbox's sandboxed processes are visible from here). */
export function processesWith(text) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(text)) found.push({ pid: Number(entry), cmdline });
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

/** This process's children that run fnbox (a private `fnbox serve`). */
export function fnboxChildren() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm === 'fnbox') found.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

/** The private servers' temp directories (fnbox-client-*) now in the temp directory. */
export function clientTempDirs() {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('fnbox-client-'));
}

export async function waitFor(predicate, ms = 5000, step = 50) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await predicate()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, step));
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejection(promise) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

/**
 * A scripted model (the LLM is mocked, nothing else): each `stream()` call plays the next turn. A turn is
 * `{text}` (a final answer) or `{tool: name, input}` (a tool use). Every call's messages are kept, so a test
 * can read the tool results the agent sent back.
 */
export class ScriptedModel extends Model {
  constructor(turns) {
    super();
    this.turns = [...turns];
    this.calls = [];
    this.config = { modelId: 'scripted' };
  }

  updateConfig(config) {
    this.config = { ...this.config, ...config };
  }

  getConfig() {
    return this.config;
  }

  async *stream(messages) {
    this.calls.push(messages.map((m) => (typeof m.toJSON === 'function' ? m.toJSON() : m)));
    const turn = this.turns.shift() ?? { text: 'done' };
    yield { type: 'modelMessageStartEvent', role: 'assistant' };
    if (turn.tool) {
      const toolUseId = `tooluse_${this.calls.length}`;
      yield { type: 'modelContentBlockStartEvent', start: { type: 'toolUseStart', name: turn.tool, toolUseId } };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'toolUseInputDelta', input: JSON.stringify(turn.input) } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'toolUse' };
    } else {
      yield { type: 'modelContentBlockStartEvent' };
      yield { type: 'modelContentBlockDeltaEvent', delta: { type: 'textDelta', text: turn.text } };
      yield { type: 'modelContentBlockStopEvent' };
      yield { type: 'modelMessageStopEvent', stopReason: 'endTurn' };
    }
  }
}

/** A tool context for calling a tool directly (as the agent would): the agent only needs its sandbox. */
export function toolContext(sandbox, name, input) {
  return {
    toolUse: { name, toolUseId: `direct_${name}`, input },
    agent: { sandbox },
    invocationState: {},
    cancelSignal: new AbortController().signal,
  };
}
