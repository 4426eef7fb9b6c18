// Drives `fnbox mcp` (stdio) or `/mcp` on `fnbox serve` (streamable HTTP) with the official MCP TypeScript SDK
// client (tests/integration/test_mcp_sdk.py runs it).
//
//   FNBOX=build/fnbox node sdk_client.mjs SCENARIO
//   FNBOX_MCP_TRANSPORT=http FNBOX_MCP_URL=http://127.0.0.1:PORT/mcp [FNBOX_MCP_TOKEN=...] node sdk_client.mjs SCENARIO
//
// stdio (the default): spawns `$FNBOX mcp` (plus the JSON array of arguments in $FNBOX_MCP_ARGS, if set),
// whose stderr is ours. http: a StreamableHTTPClientTransport to $FNBOX_MCP_URL, with `Authorization: Bearer
// $FNBOX_MCP_TOKEN` on every request when that is set; each connect() is one MCP session. Either way it
// connects a Client, runs one scenario and prints ONE JSON object on stdout: {"ok": true, ...what it
// observed}, or {"ok": false, "error", "code", "name"} when something threw. It exits 0 either way; the Python
// side judges. $FNBOX_TEST_MARKER is the unique text the process-cleanup scenarios put in their commands
// (given through the environment so that this script's own command line never carries it).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const FNBOX = process.env.FNBOX;
const EXTRA_ARGS = process.env.FNBOX_MCP_ARGS ? JSON.parse(process.env.FNBOX_MCP_ARGS) : [];
const TRANSPORT = process.env.FNBOX_MCP_TRANSPORT || 'stdio';
const HTTP = TRANSPORT === 'http';
const MCP_URL = process.env.FNBOX_MCP_URL || '';
const MCP_TOKEN = process.env.FNBOX_MCP_TOKEN || '';
const MARKER = process.env.FNBOX_TEST_MARKER || '';
const CALL_TIMEOUT_MS = 30000;        // the SDK's own request timeout for one tools/call (its default is 60 s)
const WATCHDOG_MS = Number(process.env.FNBOX_TEST_WATCHDOG_MS || 50000);

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const now = () => Number(process.hrtime.bigint() / 1000000n);

// The text of a big string kept short in the report: its length, head and tail.
function clip(s, max = 4000) {
  if (typeof s !== 'string' || s.length <= max) return s;
  return s.slice(0, max / 2) + `...[${s.length - max} chars clipped]...` + s.slice(-max / 2);
}

// Wraps the transport to record every JSON-RPC message either way and every transport error (and optionally
// rewrite the messages sent), without changing what the Client sees.
class Tap {
  constructor(inner, rewrite = null) {
    this.inner = inner;
    this.rewrite = rewrite;
    this.sent = [];
    this.received = [];
    this.errors = [];
  }
  get onmessage() { return this.inner.onmessage; }
  set onmessage(handler) {
    this.inner.onmessage = (message, extra) => {
      this.received.push({ t: now(), message });
      handler?.(message, extra);
    };
  }
  get onclose() { return this.inner.onclose; }
  set onclose(handler) { this.inner.onclose = handler; }
  get onerror() { return this.inner.onerror; }
  set onerror(handler) {
    this.inner.onerror = error => {
      this.errors.push({ t: now(), ...errorInfo(error) });
      handler?.(error);
    };
  }
  get sessionId() { return this.inner.sessionId; }
  // HTTP only: the Client sets the negotiated version (sent as MCP-Protocol-Version from then on).
  setProtocolVersion(version) { this.inner.setProtocolVersion?.(version); }
  get protocolVersion() { return this.inner.protocolVersion; }
  start() { return this.inner.start(); }
  close() { return this.inner.close(); }
  send(message, options) {
    if (this.rewrite) message = this.rewrite(message);
    this.sent.push({ t: now(), message });
    return this.inner.send(message, options);
  }
}

const open = [];   // every client connected, closed at the end (or by the watchdog)

// The headers every HTTP request carries (the SDK merges requestInit.headers into each of its requests).
function httpRequestInit() {
  return { headers: MCP_TOKEN ? { Authorization: `Bearer ${MCP_TOKEN}` } : {} };
}

// sessionId (HTTP): a transport that starts with that MCP session id; the Client then skips initialize (the
// SDK's way to resume a session).
function newTransport({ sessionId } = {}) {
  if (HTTP) {
    if (!MCP_URL) throw Object.assign(new Error('FNBOX_MCP_URL is not set'), { code: 'USAGE' });
    return new StreamableHTTPClientTransport(new URL(MCP_URL), { requestInit: httpRequestInit(), sessionId });
  }
  return new StdioClientTransport({
    command: FNBOX,
    args: ['mcp', ...EXTRA_ARGS],
    env: { ...process.env },   // all of it (sanitizer options, FNBOX_* settings), not the SDK's short list
    stderr: 'inherit',
  });
}

// A connected Client. Every entry is closed at the end (HTTP: its MCP session ended with DELETE first),
// except one marked leaveOpen.
async function connect({ rewrite = null, sessionId } = {}) {
  const transport = newTransport({ sessionId });
  const tap = new Tap(transport, rewrite);
  const client = new Client({ name: 'fnbox-test', version: '1' });
  const entry = { client, transport, tap, leaveOpen: false };
  open.push(entry);
  await client.connect(tap);
  entry.child = transport._process;   // stdio: the ChildProcess, to see how it ends (the SDK keeps it private)
  entry.sessionId = transport.sessionId ?? null;   // HTTP: the Mcp-Session-Id the server issued
  return entry;
}

// Closes one entry. HTTP: Client.close() only aborts the transport's fetches (SDK 1.32.2 sends no DELETE), so
// the MCP session is ended first with terminateSession(), unless the entry is to be left open.
async function closeEntry(entry) {
  if (HTTP && !entry.leaveOpen && entry.transport.sessionId) {
    try { await entry.transport.terminateSession(); } catch { /* reported by the scenario that cares */ }
  }
  await entry.client.close();
}

// A tools/call result as observed: isError, the content items (long texts clipped, with their lengths) and
// structuredContent (long strings in it clipped, with their lengths in *Length fields alongside).
function observe(result) {
  const out = { isError: result.isError ?? null };
  out.content = (result.content || []).map(item => {
    const o = { ...item };
    if (typeof item.text === 'string') {
      o.textLength = item.text.length;
      o.text = clip(item.text);
    }
    return o;
  });
  if ('structuredContent' in result) out.structuredContent = clipStrings(result.structuredContent);
  out.keys = Object.keys(result).sort();
  return out;
}

function clipStrings(value) {
  if (Array.isArray(value)) return value.map(clipStrings);
  if (value && typeof value === 'object') {
    const o = {};
    for (const [k, v] of Object.entries(value)) {
      o[k] = clipStrings(v);
      if (typeof v === 'string' && v.length > 4000) o[k + 'Length'] = v.length;
    }
    return o;
  }
  return clip(value);
}

function errorInfo(e) {
  return { name: e?.name ?? null, message: String(e?.message ?? e), code: e?.code ?? null, data: e?.data ?? null };
}

// Calls a tool; a rejection is observed too ({rejected: {...}}) rather than thrown.
async function call(client, name, args, options = {}) {
  const t0 = now();
  try {
    const result = await client.callTool({ name, arguments: args }, undefined,
      { timeout: CALL_TIMEOUT_MS, ...options });
    return { ...observe(result), ms: now() - t0, raw: result };
  } catch (e) {
    return { rejected: errorInfo(e), ms: now() - t0 };
  }
}

// call() without the raw result (what goes into the report).
async function obs(client, name, args, options) {
  const { raw, ...o } = await call(client, name, args, options);
  return o;
}

// Host processes whose command line or comm contains text (as fnboxlib.host_pids_matching).
function pidsMatching(text) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`).toString('utf8').replaceAll('\0', ' ');
      const comm = readFileSync(`/proc/${entry}/comm`).toString('utf8');
      if (cmd.includes(text) || comm.includes(text)) found.push([Number(entry), cmd || comm]);
    } catch { /* gone meanwhile */ }
  }
  return found;
}

// Polls until no process carries any of texts, or limitMs passes: {goneAfterMs | null, left}.
async function waitGone(texts, limitMs) {
  const t0 = now();
  for (;;) {
    const left = texts.flatMap(pidsMatching);
    if (!left.length) return { goneAfterMs: now() - t0, left };
    if (now() - t0 > limitMs) return { goneAfterMs: null, left };
    await sleep(100);
  }
}

// Closes a client and reports how that went. stdio: stdin EOF first (the SDK sends SIGTERM after 2 s, SIGKILL
// after 4 s), then how the server ended. HTTP: DELETE (terminateSession), then Client.close().
async function closeObserved(entry) {
  const child = entry.child;
  const t0 = now();
  await closeEntry(entry);
  const i = open.indexOf(entry);
  if (i >= 0) open.splice(i, 1);
  if (child && child.exitCode === null && child.signalCode === null) {
    await Promise.race([new Promise(resolve => child.once('exit', resolve)), sleep(3000)]);
  }
  return {
    closeMs: now() - t0, exitCode: child?.exitCode ?? null, signalCode: child?.signalCode ?? null,
    sessionIdAfter: entry.transport.sessionId ?? null,
  };
}

const b64 = buf => Buffer.from(buf).toString('base64');

const scenarios = {
  // The handshake as the SDK does it, then with the protocol version the client asks for rewritten.
  async initialize() {
    const { client, tap } = await connect();
    const initResponse = tap.received.find(r => r.message.result?.protocolVersion)?.message.result;
    const out = {
      serverVersion: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      instructions: client.getInstructions() ?? null,
      initResult: initResponse ?? null,
      sessionId: tap.sessionId ?? null,
      protocolVersionHeader: tap.protocolVersion ?? null,   // HTTP: what the SDK now sends as MCP-Protocol-Version
    };
    try { out.ping = await client.ping(); } catch (e) { out.ping = { rejected: errorInfo(e) }; }
    try {
      out.setLoggingLevel = await client.setLoggingLevel('info');
    } catch (e) {
      out.setLoggingLevel = { rejected: errorInfo(e) };
    }
    out.negotiated = [];
    for (const requested of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01']) {
      const rewrite = m => (m.method === 'initialize'
        ? { ...m, params: { ...m.params, protocolVersion: requested } } : m);
      const o = { requested };
      try {
        const entry = await connect({ rewrite });
        const answer = entry.tap.received.find(r => r.message.result?.protocolVersion);
        o.answered = answer?.message.result.protocolVersion ?? null;
        o.sessionId = entry.sessionId;
        // HTTP: from here on the SDK sends the negotiated version as MCP-Protocol-Version; the server takes it.
        try { o.ping = await entry.client.ping(); } catch (e) { o.ping = { rejected: errorInfo(e) }; }
        o.close = await closeObserved(entry);
      } catch (e) {
        // The SDK refuses an answer outside its own list; then what the server answered is still in the tap.
        o.rejected = errorInfo(e);
        const tapped = open.at(-1)?.tap.received.find(r => r.message.result?.protocolVersion);
        o.answered = tapped?.message.result.protocolVersion ?? null;
      }
      out.negotiated.push(o);
    }
    return out;
  },

  async list_tools() {
    const { client } = await connect();
    const listed = await client.listTools();
    return { tools: listed.tools, nextCursor: listed.nextCursor ?? null };
  },

  async list_languages() {
    const { client } = await connect();
    await client.listTools();
    return { languages: await obs(client, 'list_languages', {}) };
  },

  async run_code() {
    const { client } = await connect();
    await client.listTools();   // the SDK validates structuredContent against outputSchema only once it has them
    return {
      python: await obs(client, 'run_code', { language: 'python', code: 'print(6*7)' }),
      exit3: await obs(client, 'run_code', { language: 'python', code: 'import sys\nprint("before")\nsys.exit(3)' }),
      stdin: await obs(client, 'run_code', { language: 'python', code: 'print(input().upper())', stdin: 'shout\n' }),
      javascript: await obs(client, 'run_code',
        { language: 'javascript', code: 'console.log([1, 2, 3].map(x => x * 2).join(","))' }),
      sh: await obs(client, 'run_code', { language: 'sh', code: 'echo sh-ok; echo to-err >&2' }),
      // A fresh sandbox each time: a file one run leaves is not there for the next.
      leave: await obs(client, 'run_code', { language: 'sh', code: 'echo x > left-behind.txt && ls' }),
      look: await obs(client, 'run_code', { language: 'sh', code: 'ls left-behind.txt 2>&1; true' }),
    };
  },

  async call_function() {
    const { client } = await connect();
    await client.listTools();
    return {
      add: await obs(client, 'call_function',
        { language: 'python', code: 'def add(a, b):\n    return a + b\n', args: [2, 3] }),
      kwargs: await obs(client, 'call_function', {
        language: 'python', code: 'def greet(name, punct="."):\n    print("side")\n    return {"hi": name + punct}\n',
        functionName: 'greet', args: ['Ada'], kwargs: { punct: '!' },
      }),
      javascript: await obs(client, 'call_function',
        { language: 'javascript', code: 'function mul(a, b) { return a * b; }', args: [6, 7] }),
      raises: await obs(client, 'call_function',
        { language: 'python', code: 'def boom():\n    raise ValueError("bad value")\n' }),
    };
  },

  // The session kernel: state kept between two calls of this client, an exception an isError result.
  async run_in_kernel() {
    const { client } = await connect();
    await client.listTools();   // so the SDK validates structuredContent against the tool's outputSchema
    return {
      set: await obs(client, 'run_in_kernel', { code: 'import math\nx = 6\nx * 7' }),
      get: await obs(client, 'run_in_kernel', { code: 'print("x is", x)\n{"x": x}' }),
      raises: await obs(client, 'run_in_kernel', { code: 'raise ValueError("bad cell")' }),
      javascript: await obs(client, 'run_in_kernel', { language: 'javascript', code: 'const k = 2; k + 3' }),
    };
  },

  async files_roundtrip() {
    const { client } = await connect();
    await client.listTools();
    const all = Buffer.from([...Array(256).keys()]);
    const out = {};
    out.writeText = await obs(client, 'write_file',
      { path: 'notes/deep/a.txt', content: 'hello from write_file\nline two é\n' });
    out.catText = await obs(client, 'exec_command', { command: 'cat notes/deep/a.txt' });
    out.readText = await obs(client, 'read_file', { path: 'notes/deep/a.txt' });
    out.readAbsolute = await obs(client, 'read_file', { path: '/workspace/notes/deep/a.txt' });
    out.shellWrites = await obs(client, 'exec_command', { command: 'printf "made by sh" > made.txt' });
    out.readShellFile = await obs(client, 'read_file', { path: 'made.txt' });
    out.writeBinary = await obs(client, 'write_file', { path: 'bin/all.bin', content: b64(all), encoding: 'base64' });
    out.checkBinary = await obs(client, 'exec_command', { command: 'wc -c < bin/all.bin; sha256sum bin/all.bin' });
    const rb = await call(client, 'read_file', { path: 'bin/all.bin' });
    const sc = rb.raw?.structuredContent;
    out.readBinary = { ...rb, raw: undefined };
    out.binaryExpectedSha256 = createHash('sha256').update(all).digest('hex');
    if (sc && typeof sc.content === 'string') {
      const back = Buffer.from(sc.content, sc.encoding === 'base64' ? 'base64' : 'utf8');
      out.binaryRoundTrip = back.equals(all);
      out.binaryBackLength = back.length;
    }
    out.cwd = await obs(client, 'exec_command', { command: 'pwd' });
    out.cwdOption = await obs(client, 'exec_command', { command: 'pwd; ls', cwd: 'notes/deep' });
    return out;
  },

  async list_remove() {
    const { client } = await connect();
    await client.listTools();
    const out = {};
    out.write1 = await obs(client, 'write_file', { path: 'lr/one.txt', content: '1' });
    out.write2 = await obs(client, 'write_file', { path: 'lr/two.txt', content: '22' });
    out.write3 = await obs(client, 'write_file', { path: 'lr/sub/three.txt', content: '333' });
    out.listDir = await obs(client, 'list_files', { path: 'lr' });
    out.listRoot = await obs(client, 'list_files', {});
    out.remove = await obs(client, 'remove_file', { path: 'lr/one.txt' });
    out.listAfter = await obs(client, 'list_files', { path: 'lr' });
    out.readRemoved = await obs(client, 'read_file', { path: 'lr/one.txt' });
    out.readNever = await obs(client, 'read_file', { path: 'no/such/file.txt' });
    out.lsAfter = await obs(client, 'exec_command', { command: 'ls lr' });
    return out;
  },

  // Two clients (two server processes) at once: neither sees the other's files.
  async isolation() {
    const a = await connect();
    const b = await connect();
    await a.client.listTools();
    await b.client.listTools();
    const name = `secret-${MARKER}.txt`;
    return {
      aWrite: await obs(a.client, 'write_file', { path: name, content: 'only for A' }),
      aExec: await obs(a.client, 'exec_command', { command: `echo by-exec > exec-${MARKER}.txt; ls` }),
      bRead: await obs(b.client, 'read_file', { path: name }),
      bList: await obs(b.client, 'list_files', {}),
      bExec: await obs(b.client, 'exec_command', { command: `ls -a /workspace; cat ${name} exec-${MARKER}.txt` }),
      aReadBack: await obs(a.client, 'read_file', { path: name }),
      serverPids: [a.transport.pid, b.transport.pid],   // stdio
      sessionIds: [a.sessionId, b.sessionId],           // HTTP
    };
  },

  async unknown_tool() {
    const { client } = await connect();
    await client.listTools();
    return {
      unknown: await obs(client, 'no_such_tool', {}),
      after: await obs(client, 'exec_command', { command: 'echo still-here' }),
    };
  },

  async bad_arguments() {
    const { client } = await connect();
    await client.listTools();
    return {
      cobol: await obs(client, 'run_code', { language: 'cobol', code: 'DISPLAY "HI".' }),
      missingCode: await obs(client, 'run_code', { language: 'python' }),
      wrongType: await obs(client, 'run_code', { language: 'python', code: 'print(1)', timeout: 'soon' }),
      unknownProperty: await obs(client, 'run_code', { language: 'python', code: 'print(1)', bogus: 1 }),
      missingCommand: await obs(client, 'exec_command', {}),
      badEncoding: await obs(client, 'write_file', { path: 'x.txt', content: 'x', encoding: 'rot13' }),
      after: await obs(client, 'exec_command', { command: 'echo still-here' }),
    };
  },

  async progress() {
    const { client, tap } = await connect();
    await client.listTools();
    const notes = [];
    const t0 = now();
    const res = await obs(client, 'exec_command',
      { command: 'for i in 1 2 3; do echo tick$i; sleep 1; done' },
      { onprogress: p => notes.push({ atMs: now() - t0, ...p }) });
    const resultAtMs = now() - t0;
    const request = tap.sent.find(s => s.message.method === 'tools/call')?.message;
    return {
      result: res,
      resultAtMs,
      progress: notes,
      progressToken: request?.params?._meta?.progressToken ?? null,
      rawProgress: tap.received.filter(r => r.message.method === 'notifications/progress').map(r => r.message.params),
      otherNotifications: tap.received
        .filter(r => r.message.method && r.message.method !== 'notifications/progress').map(r => r.message),
    };
  },

  // A silent run longer than 5 s still gets progress notifications (at least every 5 s).
  async heartbeat() {
    const { client } = await connect();
    await client.listTools();
    const notes = [];
    const t0 = now();
    const res = await obs(client, 'exec_command', { command: 'sleep 7; echo done' },
      { onprogress: p => notes.push({ atMs: now() - t0, ...p }) });
    return { result: res, resultAtMs: now() - t0, progress: notes };
  },

  // Abort a busy loop after ~1 s: the SDK sends notifications/cancelled; the loop must end; the client goes on.
  async cancel() {
    const { client, tap } = await connect();
    await client.listTools();
    const controller = new AbortController();
    const t0 = now();
    const pending = call(client, 'exec_command', { command: `: ${MARKER}; while :; do :; done`, timeout: 60 },
      { signal: controller.signal });
    while (!pidsMatching(MARKER).length && now() - t0 < 5000) await sleep(50);
    await sleep(Math.max(0, 1000 - (now() - t0)));
    const before = pidsMatching(MARKER);
    controller.abort();
    const settled = await pending;
    const out = { before, rejectedAfterMs: now() - t0, outcome: { ...settled, raw: undefined } };
    out.cancelSent = tap.sent.filter(s => s.message.method === 'notifications/cancelled').map(s => s.message.params);
    out.cleanup = await waitGone([MARKER], 8000);
    out.after = await obs(client, 'exec_command', { command: 'echo alive' });
    // A response to the cancelled request must not arrive (the spec says the server should not send one);
    // the SDK drops it silently, so look at the wire.
    const id = tap.sent.find(s => s.message.method === 'tools/call')?.message.id;
    out.responsesToCancelled = tap.received.filter(r => r.message.id === id && !r.message.method).map(r => r.message);
    return out;
  },

  async timeout() {
    const { client } = await connect();
    await client.listTools();
    return {
      result: await obs(client, 'run_code',
        { language: 'python', code: "import time\nprint('early', flush=True)\ntime.sleep(30)\n", timeout: 1 }),
    };
  },

  // Closing the client (stdin EOF) ends the server, and with it everything its session runs. (A command's
  // background processes, `cmd &`, are killed when the command ends already: each runs in a PID namespace.)
  async stdin_eof() {
    const entry = await connect();
    await entry.client.listTools();
    const digits = (MARKER.replace(/\D/g, '') + '4242').slice(0, 9);
    const sleeper = `3000.${digits}`;   // the grandchild's own command line carries this one
    const out = { sleeper };
    out.background = await obs(entry.client, 'exec_command',
      { command: `nohup sh -c ': ${MARKER}-bg; sleep ${sleeper}1; :' >/dev/null 2>&1 & echo started` });
    out.backgroundLeft = [...pidsMatching(`${MARKER}-bg`), ...pidsMatching(`${sleeper}1`)];
    // A command still running when the client goes away.
    const pending = call(entry.client, 'exec_command', { command: `: ${MARKER}; sleep ${sleeper}; :`, timeout: 60 });
    const t0 = now();
    while (!pidsMatching(sleeper).length && now() - t0 < 5000) await sleep(50);
    out.before = [...pidsMatching(MARKER), ...pidsMatching(sleeper)];
    out.serverPid = entry.transport.pid;
    out.close = await closeObserved(entry);
    out.pending = { ...(await pending), raw: undefined };
    out.serverStillThere = out.serverPid ? existsSync(`/proc/${out.serverPid}`) : null;
    out.cleanup = await waitGone([MARKER, sleeper], 5000);
    return out;
  },

  async output_cap() {
    const { client } = await connect();
    await client.listTools();
    const out = {};
    const big = await call(client, 'exec_command', { command: "head -c 100000 /dev/zero | tr '\\0' a" });
    out.big = { ...big, raw: undefined };
    const sc = big.raw?.structuredContent;
    if (sc) {
      out.stdoutLength = typeof sc.stdout === 'string' ? sc.stdout.length : null;
      out.stdoutHead = typeof sc.stdout === 'string' ? sc.stdout.slice(0, 200) : null;
      out.stdoutNonA = typeof sc.stdout === 'string' ? sc.stdout.replace(/a/g, '').slice(0, 2000) : null;
    }
    const file = sc?.outputFile;
    if (typeof file === 'string') {
      const rf = await call(client, 'read_file', { path: file });
      out.readOutputFile = { ...rf, raw: undefined };
      const rsc = rf.raw?.structuredContent;
      if (rsc) {
        const content = typeof rsc.content === 'string'
          ? Buffer.from(rsc.content, rsc.encoding === 'base64' ? 'base64' : 'utf8') : null;
        out.outputFileSize = rsc.size ?? null;
        out.outputFileContentLength = content ? content.length : null;
        out.outputFileAllA = content ? !content.some(byte => byte !== 0x61) : null;
      }
      out.wcOutputFile = await obs(client, 'exec_command', { command: `wc -c < '${file}'` });
    }
    out.small = await obs(client, 'exec_command', { command: 'echo small' });
    return out;
  },

  // HTTP: how a client ends its MCP session. terminateSession() sends DELETE: the session ends, and a transport
  // still carrying its id gets 404. Client.close() alone only aborts the transport's fetches (SDK 1.32.2 sends
  // no DELETE), so that session stays until a DELETE. The Python side checks both ids with raw HTTP after.
  async session_end() {
    if (!HTTP) throw Object.assign(new Error('session_end needs FNBOX_MCP_TRANSPORT=http'), { code: 'USAGE' });
    const out = {};
    const a = await connect();
    await a.client.listTools();
    out.aWrite = await obs(a.client, 'write_file', { path: 'end.txt', content: 'from a' });
    out.terminatedId = a.transport.sessionId;
    try {
      await a.transport.terminateSession();
      out.terminate = 'ok';
    } catch (e) {
      out.terminate = { rejected: errorInfo(e) };
    }
    out.sessionIdAfterTerminate = a.transport.sessionId ?? null;
    // The same client again: its transport has no session id any more, so the server refuses the request.
    out.callAfterTerminate = await obs(a.client, 'exec_command', { command: 'echo x' });
    // A transport resuming the ended session (the SDK skips initialize when given a session id): 404.
    const resumed = await connect({ sessionId: out.terminatedId });
    resumed.leaveOpen = true;
    out.resumeTerminated = await obs(resumed.client, 'read_file', { path: 'end.txt' });

    const b = await connect();
    await b.client.listTools();
    out.bWrite = await obs(b.client, 'write_file', { path: 'end.txt', content: 'from b' });
    out.closedId = b.transport.sessionId;
    b.leaveOpen = true;
    out.bClose = await closeObserved(b);   // Client.close() only
    // Resumed by another transport, the closed client's session is still there, files and all.
    const again = await connect({ sessionId: out.closedId });
    again.leaveOpen = true;   // the Python side ends it with a raw DELETE once it has seen it open
    out.resumeClosed = await obs(again.client, 'read_file', { path: 'end.txt' });
    return out;
  },

  // HTTP: the server is stopped (SIGTERM from the Python side, once it sees the command running) while one MCP
  // session of ours sits idle with a file in it and another has a call in flight.
  async server_stop() {
    if (!HTTP) throw Object.assign(new Error('server_stop needs FNBOX_MCP_TRANSPORT=http'), { code: 'USAGE' });
    const out = {};
    const idle = await connect();
    idle.leaveOpen = true;
    out.idleWrite = await obs(idle.client, 'write_file', { path: 'kept.txt', content: 'kept' });
    const busy = await connect();
    busy.leaveOpen = true;
    await busy.client.listTools();
    out.sessionIds = [idle.sessionId, busy.sessionId];
    const t0 = now();
    let settled = null;
    const command = `: ${MARKER}; while :; do sleep 1; done`;
    const pending = call(busy.client, 'exec_command', { command, timeout: 60 })
      .then(r => { settled = { ...r, raw: undefined, settledAtMs: now() - t0 }; });
    while (!pidsMatching(MARKER).length && now() - t0 < 10000) await sleep(50);
    out.before = pidsMatching(MARKER);
    out.cleanup = await waitGone([MARKER], 30000);   // the Python side stops the server meanwhile
    out.goneAtMs = now() - t0;
    await Promise.race([pending, sleep(2000)]);
    out.call = settled ?? 'pending';   // 'pending': no answer came (the SDK would wait for its request timeout)
    out.busyErrors = busy.tap.errors.map(e => e.message);
    out.afterStop = await obs(idle.client, 'read_file', { path: 'kept.txt' });
    return out;
  },
};

async function main() {
  const name = process.argv[2];
  if (!HTTP && !FNBOX) throw Object.assign(new Error('FNBOX (the fnbox binary) is not set'), { code: 'NO_FNBOX' });
  if (!['stdio', 'http'].includes(TRANSPORT)) {
    throw Object.assign(new Error(`FNBOX_MCP_TRANSPORT is ${TRANSPORT}: stdio or http`), { code: 'USAGE' });
  }
  if (!scenarios[name]) {
    const known = Object.keys(scenarios).join(', ');
    throw Object.assign(new Error(`unknown scenario ${name}; one of ${known}`), { code: 'USAGE' });
  }
  const observed = await scenarios[name]();
  return { ok: true, scenario: name, transport: TRANSPORT, ...observed };
}

let printed = false;
function report(obj) {
  if (printed) return;
  printed = true;
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function closeAll() {
  await Promise.allSettled(open.splice(0).map(closeEntry));
}

const watchdog = setTimeout(async () => {
  report({ ok: false, error: `watchdog: scenario still running after ${WATCHDOG_MS} ms`, code: 'WATCHDOG' });
  for (const e of open) e.transport._process?.kill('SIGKILL');
  process.exit(0);
}, WATCHDOG_MS);

try {
  report(await main());
} catch (e) {
  report({ ok: false, ...errorInfo(e), error: String(e?.message ?? e), stack: String(e?.stack ?? '') });
}
await closeAll();
clearTimeout(watchdog);
process.exit(0);
