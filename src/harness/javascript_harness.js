'use strict';
// fnbox in-sandbox harness for JavaScript (protocol: docs/internals/harness-protocol.md).
//
// Started as `node /.fnbox/harness.js`; fd 4 holds the call input (one JSON document), fd 3 receives the
// result (one JSON header line, then on success the raw result JSON).
//
// Close-on-exec: Node itself marks every inherited descriptor above 2 FD_CLOEXEC during start-up
// (PlatformInit; strace shows `fcntl(3, F_SETFD, FD_CLOEXEC)` before any JS runs), and Node has no fcntl API,
// so there is nothing to do for fd 3; fd 4 is closed as soon as the input is read.  child_process only passes
// the stdio it is asked to pass in any case.
//
// Start-up cost (~1-1.5 ms of harness work on a trivial call, measured with performance.now()): no module is
// required but fs and vm; util loads only for errors.  V8 compiles a regular expression on its first use
// (~0.1-0.2 ms), so the success path uses none.

const fs = require('fs');
const vm = require('vm');
const Module = module.constructor;      // require('module') without the cost of loading its public face

const RESULT_FD = 3;
const INPUT_FD = 4;
const USER_FILE = 'user_code.js';
const HARNESS_FILE = __filename;
const CELL_FILE = /<cell \d+>:\d/; // a session kernel's cells are user code too, each under its own name
const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname'];
// Grace period for work the function left running (timers, sockets, unawaited writes) after the result is
// published: the process exits as soon as the event loop is empty, or after this long at the latest.
const EXIT_GRACE_MS = 200;

// Intrinsics the harness uses after user code has run (which may have replaced the globals).
const jsonStringify = JSON.stringify;
const jsonParse = JSON.parse;
const isArray = Array.isArray;
const objectKeys = Object.keys;
const defineProperty = Object.defineProperty;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const arrayFrom = Array.from;
const SafeSet = Set;
const bufferFrom = Buffer.from;
const byteLength = Buffer.byteLength;
const bigIntToString = Function.prototype.call.bind(BigInt.prototype.toString);
const realExit = process.exit;
const realReallyExit = process.reallyExit;
const processKill = process.kill;
const reflectApply = Reflect.apply;
const numberValueOf = Function.prototype.call.bind(Number.prototype.valueOf);
const stringValueOf = Function.prototype.call.bind(String.prototype.valueOf);
const booleanValueOf = Function.prototype.call.bind(Boolean.prototype.valueOf);

let published = false;      // fd 3 has been written
let exitStatus = 0;

class HarnessError extends Error {
  constructor(type, message) {
    super(message);
    this.type = type;
  }
}

// ------------------------------------------------------------------------------------------------ input

function readInput() {
  // readFileSync(fd, 'utf8') is the fastest read Node has (~0.05 ms; a Buffer and toString cost ~0.3 ms more
  // on a cold start) but reads from the file position: if that was not 0, read the file from offset 0.
  let req;
  try {
    let text = fs.readFileSync(INPUT_FD, 'utf8');
    req = jsonParse(text);
    if (text.length > LARGE) {
      text = null;
      collectGarbage();
    }
  } catch (e) {
    const st = fs.fstatSync(INPUT_FD);
    if (!st.isFile()) throw e;
    const buf = Buffer.allocUnsafe(st.size);
    let off = 0;
    while (off < st.size) {
      const n = fs.readSync(INPUT_FD, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    req = jsonParse(buf.toString('utf8', 0, off));
  }
  try { fs.closeSync(INPUT_FD); } catch (e) { /* already closed */ }
  return req;
}

function setBigInt(args, path) {
  // path: array indexes / object keys into args; the value there is a decimal string.
  let o = args;
  for (let i = 0; i < path.length - 1; i++) o = o[path[i]];
  const k = path[path.length - 1];
  o[k] = BigInt(o[k]);
}

// ----------------------------------------------------------------------------------------------- output

// Large inputs and results: V8 leaves a 64 MB text it no longer needs (the input, the parts JSON.stringify
// built the result from) until some later collection, and the call's memory limit counts it meanwhile.  Past
// LARGE characters the harness collects at the points where it has just let go of such a text, sweeping on
// this thread so that the pages are gone when gc() returns (a concurrent sweep frees them ~50 ms later).
const LARGE = 1 << 24;
let gcFn = null;
function collectGarbage() {
  try {
    if (gcFn === null) {
      require('v8').setFlagsFromString('--expose-gc --no-concurrent-sweeping');
      gcFn = vm.runInNewContext('gc');
    }
    gcFn();
  } catch (e) { /* only memory is at stake */ }
}

function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
}

function writeString(fd, s) {
  // Small texts go straight out as a string (no Buffer); a partial write falls back to the loop.
  const n = fs.writeSync(fd, s);
  const len = byteLength(s, 'utf8');
  if (n < len) writeAll(fd, bufferFrom(s, 'utf8').subarray(n));
}

// process.stdout/stderr writes are synchronous for files and pipes on Linux (Node docs, "A note on process
// I/O"), so the function's own output is already on fds 1/2 when the result is written.
function publish(header, body) {
  if (published) return;
  published = true;
  try {
    if (body === undefined) {
      writeString(RESULT_FD, header);
    } else if (body.length < (1 << 16)) {
      writeString(RESULT_FD, header + body);
    } else {
      // A slice at a time: a 64 MB result never exists twice over (string + Buffer) next to its copy in the
      // result memfd, which the call's memory limit counts too.  JSON.stringify escapes lone surrogates, so
      // a pair is only ever split by a slice boundary: move it back by one unit.
      writeAll(RESULT_FD, bufferFrom(header, 'utf8'));
      if (body.length > LARGE) {
        collectGarbage();       // the value (main() let go of it)
        body.charCodeAt(0);     // flattens the text in place; then the parts it was built from can go
        collectGarbage();
      }
      const step = 1 << 22;
      for (let i = 0; i < body.length;) {
        let j = i + step < body.length ? i + step : body.length;
        const c = body.charCodeAt(j - 1);
        if (j < body.length && c >= 0xd800 && c <= 0xdbff) j--;
        writeString(RESULT_FD, body.slice(i, j));      // no Buffer left for the GC per slice
        i = j;
      }
    }
  } catch (e) {
    // The result channel itself failed (fd 3 closed by the function...): fnbox reports NoResult.
    reflectApply(realExit, process, [70]);
  }
}

function publishError(type, message, stack, code) {
  publish(jsonStringify({ ok: false, error: { type, message, stack }, exitCode: code }) + '\n');
}

// ---------------------------------------------------------------------------------------- serialization
//
// Fast path: JSON.stringify with toJSON temporarily installed on the prototypes of the values it would get
// wrong (BigInt, Map, Set, ArrayBuffer, typed arrays and Buffer, DataView).  JSON.stringify already does the
// rest of the table: NaN/Infinity -> null, undefined/functions/symbols omitted in objects and null in
// arrays, toJSON (Date -> ISO string), cycle detection.  BigInts come out as strings "<nonce><digits>" (the
// nonce is random per run; a JSON string cannot hide a quote before it) that are then unquoted.  Slow path (nesting past the stack, or conversions that expand forever): an
// iterative serializer with the same rules.  JSON.stringify is ~7x faster than any serializer in JS
// (1M numbers: 30 ms vs 200 ms).

const NONCE = 'fnbox' + Math.random().toString(36).slice(2) + Date.now().toString(36);
let sawBigInt = false;

function base64Of(v) {
  const b = v instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && v instanceof SharedArrayBuffer)
    ? bufferFrom(v) : bufferFrom(v.buffer, v.byteOffset, v.byteLength);
  return { base64: b.toString('base64') };
}

function mapToObject(m) {
  const o = {};
  for (const [k, v] of m) o[typeof k === 'string' ? k : String(k)] = v;
  return o;
}

const TYPED_ARRAY_PROTO = Object.getPrototypeOf(Uint8Array.prototype);
const PATCHES = [
  [BigInt.prototype, function toJSON() { sawBigInt = true; return NONCE + bigIntToString(this); }],
  [Map.prototype, function toJSON() { return mapToObject(this); }],
  [Set.prototype, function toJSON() { return arrayFrom(this); }],
  [TYPED_ARRAY_PROTO, function toJSON() { return base64Of(this); }],
  [Buffer.prototype, function toJSON() { return base64Of(this); }],
  [ArrayBuffer.prototype, function toJSON() { return base64Of(this); }],
  [DataView.prototype, function toJSON() { return base64Of(this); }],
];
if (typeof SharedArrayBuffer === 'function') {
  PATCHES.push([SharedArrayBuffer.prototype, function toJSON() { return base64Of(this); }]);
}

const BUFFER_TO_JSON = getOwnPropertyDescriptor(Buffer.prototype, 'toJSON');

function withConversions(f) {
  // A toJSON the function's code put on one of these prototypes itself stays (toJSON is honoured); Node's
  // own Buffer.prototype.toJSON ({type: 'Buffer', data: [...]}) does not.
  const saved = [];
  for (let i = 0; i < PATCHES.length; i++) {
    const [proto, fn] = PATCHES[i];
    const d = getOwnPropertyDescriptor(proto, 'toJSON');
    saved[i] = d;
    if (d === undefined || (proto === Buffer.prototype && d.value === BUFFER_TO_JSON.value)) {
      defineProperty(proto, 'toJSON', { value: fn, writable: true, configurable: true, enumerable: false });
    }
  }
  try {
    return f();
  } finally {
    for (let i = 0; i < PATCHES.length; i++) {
      const proto = PATCHES[i][0];
      if (saved[i]) defineProperty(proto, 'toJSON', saved[i]);
      else delete proto.toJSON;
    }
  }
}

function unmarkBigInts(text) {
  return text.replace(new RegExp(`"${NONCE}(-?[0-9]+)"`, 'g'), '$1');
}

function serialize(value) {
  const t = typeof value;
  if (t === 'function' || t === 'symbol') {
    throw new HarnessError('SerializationError', `the result is a ${t}, which JSON cannot represent`);
  }
  if (t !== 'object' && t !== 'bigint') return value === undefined ? 'null' : jsonStringify(value);
  sawBigInt = false;
  let text;
  try {
    text = withConversions(() => jsonStringify(value));
  } catch (e) {
    if (e instanceof RangeError) {
      text = withConversions(() => serializeIteratively(value));   // deep nesting
    } else if (e instanceof TypeError && /circular/i.test(e.message)) {
      throw new HarnessError('SerializationError',
        'circular reference in the result: ' + String(e.message).split('\n').join(' '));
    } else {
      throw conversionFailed(e);
    }
  }
  if (text === undefined) {
    if (value !== undefined) throw new HarnessError('SerializationError', 'the result is not representable as JSON');
    return 'null';
  }
  return sawBigInt ? unmarkBigInts(text) : text;
}

function conversionFailed(e) {
  if (e instanceof HarnessError) return e;
  const h = new HarnessError('SerializationError',
    `cannot serialize the result: ${errorType(e)}: ${e && typeof e === 'object' ? e.message : String(e)}`);
  h.cause = e;
  return h;
}

// The same rules without recursion.  Frames: [kind (0 array, 1 object, 2 value converted by toJSON), value,
// keys, index]; a kind-2 frame keeps the value before toJSON on the path, for cycle detection.
function serializeIteratively(root) {
  let out = '';
  const active = new SafeSet();  // objects on the current path
  const stack = [];
  let v = root;
  let key = '';
  let converted = false;         // v is already the result of toJSON (applied once, as JSON.stringify does)
  for (;;) {
    let t = typeof v;
    if (!converted && ((t === 'object' && v !== null) || t === 'bigint') && typeof v.toJSON === 'function') {
      if (t === 'object') enter(v, 2, null);
      v = reflectApply(v.toJSON, v, [key]);
      t = typeof v;
    }
    if (t === 'object' && v !== null) {
      // Boxed primitives are written as their value.
      if (v instanceof Number) { v = numberValueOf(v); t = 'number'; }
      else if (v instanceof String) { v = stringValueOf(v); t = 'string'; }
      else if (v instanceof Boolean) { v = booleanValueOf(v); t = 'boolean'; }
    }
    if (t === 'string') out += jsonStringify(v);
    else if (t === 'number') out += (v === v && v !== Infinity && v !== -Infinity) ? String(v) : 'null';
    else if (t === 'boolean') out += v ? 'true' : 'false';
    else if (t === 'object' && v !== null) {
      if (isArray(v)) {
        out += '[';
        enter(v, 0, null);
      } else {
        out += '{';
        enter(v, 1, objectKeys(v));
      }
    } else {
      out += 'null';    // null; undefined at the top or in an array; a function or symbol in an array
    }
    // Find the next value to write.
    let more = false;
    while (stack.length) {
      const f = stack[stack.length - 1];
      if (f[0] === 0) {
        const a = f[1];
        if (f[3] < a.length) {
          if (f[3] > 0) out += ',';
          key = String(f[3]);
          v = a[f[3]++];
          converted = false;
          more = true;
          break;
        }
        out += ']';
      } else if (f[0] === 1) {
        const o = f[1];
        const keys = f[2];
        while (f[3] < keys.length) {
          const k = keys[f[3]++];
          let x = o[k];
          let tx = typeof x;
          let orig = null;
          if (((tx === 'object' && x !== null) || tx === 'bigint') && typeof x.toJSON === 'function') {
            // toJSON first: a member whose value becomes undefined is not written at all.
            if (tx === 'object') orig = x;
            x = reflectApply(x.toJSON, x, [k]);
            tx = typeof x;
          }
          if (tx === 'undefined' || tx === 'function' || tx === 'symbol') continue;
          out += (f[4] ? ',' : '') + jsonStringify(k) + ':';
          f[4] = true;
          if (orig !== null) enter(orig, 2, null);
          key = k;
          v = x;
          converted = true;
          more = true;
          break;
        }
        if (more) break;
        out += '}';
      }
      stack.pop();
      active.delete(f[1]);
    }
    if (!more) return out;
  }

  function enter(o, kind, keys) {
    if (active.has(o)) throw new HarnessError('SerializationError', 'circular reference in the result');
    active.add(o);
    stack.push([kind, o, keys, 0, false]);
  }
}

// ----------------------------------------------------------------------------------------------- errors

function errorType(e) {
  if (e === null || typeof e !== 'object') return 'Error';
  try {
    const n = e.name;
    if (typeof n === 'string' && n && n !== 'Error') return n;
    const c = e.constructor && e.constructor.name;
    if (typeof c === 'string' && c && c !== 'Object') return c;
  } catch (err) { /* hostile getters */ }
  return 'Error';
}

function cleanStack(stack) {
  // Frames are listed innermost first.  Past harness frames on top (the process.exit replacement), the first
  // harness frame is where the harness called the user's code: it and everything below it are plumbing.
  // With no user frame at all (syntax errors), no frames.
  const lines = String(stack).split('\n');
  const isFrame = (l) => /^\s+at /.test(l);
  const isUser = (l) => l.includes(USER_FILE) || CELL_FILE.test(l);
  const head = [];
  const frames = [];
  let i = 0;
  while (i < lines.length && !isFrame(lines[i])) head.push(lines[i++]);
  while (i < lines.length && lines[i].includes(HARNESS_FILE)) i++;
  for (; i < lines.length; i++) {
    if (lines[i].includes(HARNESS_FILE)) break;
    frames.push(lines[i]);
  }
  let last = -1;
  frames.forEach((l, j) => { if (isUser(l)) last = j; });
  const kept = last < 0 ? [] : frames.slice(0, last + 1).concat(
    frames.slice(last + 1).filter((l) => isFrame(l) && !/[( ]node:/.test(l)));
  return head.concat(kept).join('\n');
}

function describeThrown(e) {
  // { type, message, stack } for anything the user's code throws.
  if (e instanceof HarnessError) return { type: e.type, message: e.message, stack: e.cause ? describeThrown(e.cause).stack : '' };
  let isErrorLike = false;
  try {
    isErrorLike = e instanceof Error || (e !== null && typeof e === 'object' && typeof e.stack === 'string' && 'message' in e);
  } catch (err) { /* proxies */ }
  if (!isErrorLike) {
    // `throw "x"`, `throw 42`, `throw {code: 1}`: type Error, the value as the message, no stack.
    const message = typeof e === 'string' ? e : require('util').inspect(e);
    return { type: 'Error', message, stack: '' };
  }
  let message = '';
  let stack = '';
  try { message = String(e.message); } catch (err) { /* hostile */ }
  try { stack = cleanStack(e.stack); } catch (err) { /* hostile */ }
  const type = errorType(e);
  if (type === 'SyntaxError') {
    // Node puts "user_code.js:LINE\n<source line>\n<carets>\n\n" in front of a compile error's stack.
    const m = /^(user_code\.js|<cell \d+>):(\d+)\n/.exec(stack);
    if (m && !/\((?:user_code\.js|<cell \d+>), line \d+\)$/.test(message)) message += ` (${m[1]}, line ${m[2]})`;
  }
  return { type, message, stack };
}

function fail(e) {
  const d = describeThrown(e);
  publishError(d.type, d.message, d.stack, 1);
  exitStatus = 1;
}

// ---------------------------------------------------------------------------------------- process hooks

function installProcessHooks() {
  // process.exit() calls this after the 'exit' listeners.  With the result published nothing more is written:
  // closing stdout and stderr, then ending at once (SIGKILL to itself) skips Node's own teardown (~2 ms: the
  // platform's threads, the heap), and fnbox, seeing a complete result, needs no exit status.
  process.reallyExit = function reallyExit(code) {
    if (published) {
      try { fs.closeSync(1); fs.closeSync(2); } catch (e) { /* closed by the function */ }
      reflectApply(processKill, process, [process.pid, 9]); // SIGKILL, by number: no name lookup
    }
    return reflectApply(realReallyExit, process, [code]);
  };
  process.exit = function exit(code) {
    // process.exit(n) from the function: the result says so, then the process really exits with n.
    if (!published) {
      let n = code === undefined ? process.exitCode : code;
      n = n === undefined || n === null ? 0 : Number(n);
      if (Number.isInteger(n)) {
        const where = cleanStack(new Error().stack).split('\n').slice(1).join('\n');
        publishError('ProcessExit', `exit code ${n}`, `ProcessExit: exit code ${n}` + (where ? '\n' + where : ''), n & 0xFF);
      }
    }
    return reflectApply(realExit, process, arguments);
  };
  process.on('uncaughtException', (err) => {
    if (published) {
      process.stderr.write(`fnbox: uncaught exception after the result: ${describeThrown(err).stack || err}\n`);
      return;
    }
    fail(err);
    finish();
  });
  process.on('unhandledRejection', (reason) => {
    if (published) {
      process.stderr.write(`fnbox: unhandled rejection after the result: ${describeThrown(reason).stack || reason}\n`);
      return;
    }
    fail(reason);
    finish();
  });
  process.on('beforeExit', () => {
    // The event loop emptied.  If the function's promise never settled, say so rather than leave fd 3 empty.
    if (!published) {
      publishError('NoResult', 'the function returned a promise that never settled', '', 1);
      exitStatus = 1;
    }
    reflectApply(realExit, process, [exitStatus]);
  });
}

function finish() {
  // Once the microtasks the function queued have run (next tick), leave at once if no timer, handle or request
  // is pending, without entering the event loop.  Otherwise leave when the event loop is empty (beforeExit),
  // at the latest after the grace period.  (A pipe on stdout that was written to counts as pending, so a
  // function that prints takes the second way.)
  process.nextTick(() => {
    if (typeof process.getActiveResourcesInfo === 'function' && process.getActiveResourcesInfo().length === 0) {
      // Nothing listens for 'exit': straight to reallyExit (above), which is all process.exit would then do
      // (its first run costs ~0.15 ms).
      if (published && process.listenerCount('exit') === 0) process.reallyExit(exitStatus);
      reflectApply(realExit, process, [exitStatus]);
    }
    setTimeout(() => reflectApply(realExit, process, [exitStatus]), EXIT_GRACE_MS).unref();
  });
}

// -------------------------------------------------------------------------------------------- user code

const RESERVED = new Set(('break case catch class const continue debugger default delete do else enum export ' +
  'extends false finally for function if import in instanceof new null return super switch this throw true try ' +
  'typeof var void while with yield let static implements interface package private protected public await ' +
  'arguments eval undefined').split(' '));
function isPlainIdentifier(name) {
  if (typeof name !== 'string' || name === '' || RESERVED.has(name)) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const ok = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || (i > 0 && c >= 48 && c <= 57);
    if (!ok) return /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u.test(name);   // non-ASCII names
  }
  return true;
}

// For the FunctionNotFound message: the functions the code declares at the start of a line (top-level code
// is rarely indented): `function NAME`, `async function NAME`, `const|let|var NAME = <function or arrow>`.
// Read from the text, since the bindings are out of reach once the module body has run.
function declaredFunctions(code) {
  const names = [];
  const id = '([\\p{ID_Start}$_][\\p{ID_Continue}$]*)';
  const re = new RegExp(`^(?:export\\s+)?(?:async\\s+)?function\\s*\\*?\\s*${id}|` +
    `^(?:export\\s+)?(?:const|let|var)\\s+${id}\\s*=\\s*(?:async\\b\\s*)?(?:function\\b|\\([^)]*\\)\\s*=>|${id}\\s*=>)`, 'gmu');
  let m;
  while ((m = re.exec(code)) !== null) {
    const n = m[1] || m[2];
    if (!names.includes(n)) names.push(n);
  }
  return names;
}

function isClass(f) {
  // A class constructor's `prototype` is read-only; a function's is writable; an arrow function has none.
  // (No regular expression on the success path: the first one costs ~0.2 ms.)
  const d = getOwnPropertyDescriptor(f, 'prototype');
  return d !== undefined && d.writable === false;
}

// import() in the user's code: Node's default ESM loader, resolving from the working directory (the
// workspace).  A callback of our own would need --experimental-vm-modules; this constant does not, but Node
// 20 warns that it is experimental the first time it is used: that warning is the harness's, not the
// function's, and is dropped.
const IMPORT_DYNAMICALLY = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
if (IMPORT_DYNAMICALLY) {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (String(warning && warning.message !== undefined ? warning.message : warning).startsWith('vm.USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
    return reflectApply(emitWarning, process, [warning, ...rest]);
  };
}

// permissions.network: Node 20's https ignores HTTPS_PROXY (docs/internals/network.md), so with fnbox's proxy
// in the environment every https.Agent (the global one and the function's own) opens its connections as a
// CONNECT tunnel through it, and verifies them against the system's CA bundle (the host's /etc/ssl/certs,
// as OpenSSL-based clients do; Node's own list only where there is none) unless the request names its own
// `ca`. Calls and session kernels (javascript_kernel.js) alike. Only fnbox's own value is honoured (the proxy's variables replace any the request sets); nothing is
// loaded without it: https and tls cost milliseconds.
function tunnelHttps() {
  const proxy = process.env.HTTPS_PROXY;
  if (typeof proxy !== 'string' || !proxy.startsWith('http://127.0.0.1:')) return;
  const proxyPort = Number(proxy.slice('http://127.0.0.1:'.length).replace(/\/$/, ''));
  const http = require('http');
  const https = require('https');
  const tls = require('tls');
  let systemContext;
  const context = () => {
    if (systemContext === undefined) {
      let bundle = null;
      try { bundle = fs.readFileSync('/etc/ssl/certs/ca-certificates.crt', 'latin1'); } catch (e) { /* none */ }
      systemContext = bundle ? tls.createSecureContext({ ca: bundle }) : null;
    }
    return systemContext;
  };
  https.Agent.prototype.createConnection = function createConnection(options, done) {
    const host = String(options.host || 'localhost');
    const target = `${host.includes(':') ? `[${host}]` : host}:${options.port || 443}`;
    const req = http.request({ host: '127.0.0.1', port: proxyPort, method: 'CONNECT', path: target,
      headers: { host: target }, agent: false });
    req.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        const e = new Error(`fnbox's proxy refused CONNECT ${target}: ${res.statusCode} ${res.statusMessage}`);
        e.code = 'ECONNREFUSED';
        done(e);
        return;
      }
      const opts = { ...options, socket };
      if (!opts.ca && !opts.secureContext && context()) opts.secureContext = context();
      done(null, tls.connect(opts));
    });
    req.once('error', done);
    req.end();
  };
}

function makeContext(workdir) {
  let dir = workdir;
  while (dir.length > 1 && dir.charCodeAt(dir.length - 1) === 47 /* / */) dir = dir.slice(0, -1);
  const filename = (dir === '/' ? '' : dir) + '/' + USER_FILE;
  const mod = new Module(filename, null);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(dir);
  const req = Module.createRequire(filename);
  process.argv[1] = filename;
  return { module: mod, require: req, filename, dirname: dir };
}

function notFound(name, code, value, exportsValue) {
  const have = declaredFunctions(code).filter((n) => n !== name);
  if (exportsValue && typeof exportsValue === 'object') {
    for (const k of objectKeys(exportsValue)) {
      if (typeof exportsValue[k] === 'function' && !have.includes(k)) have.push(k);
    }
  }
  let what = `'${name}' is not defined`;
  if (value !== undefined) what = isClass(value) ? `'${name}' is a class, not a function` : `'${name}' is not a function (it is ${value === null ? 'null' : typeof value})`;
  return new HarnessError('FunctionNotFound',
    `${what} in user_code.js; functions defined: ${have.length ? have.join(', ') : '(none)'}`);
}

async function runFunction(code, name, args, ctx) {
  // Compile as a CommonJS module body, with a trailer that hands back the top-level binding of that name
  // (top-level const/let are not reachable any other way).  The trailer follows the code on a new line, so
  // every line number of the code is unchanged.
  const trailer = isPlainIdentifier(name)
    ? `\n;return [${jsonStringify(NONCE)}, typeof ${name} === "undefined" ? undefined : ${name}];`
    : `\n;return [${jsonStringify(NONCE)}, undefined];`;
  const opts = { filename: USER_FILE, importModuleDynamically: IMPORT_DYNAMICALLY };
  let wrapper;
  try {
    wrapper = vm.compileFunction(code + trailer, PARAMS, opts);
  } catch (e) {
    // ES module syntax: again as CommonJS.  A syntax error: report the one the code has on its own (the
    // trailer must not show in it); if the code compiles alone after all, run it without the lookup and rely
    // on module.exports.
    const source = /\b(?:export|import)\b/.test(e.message) ? esmToCjs(code) : code;
    try {
      if (source === code) throw e;
      wrapper = vm.compileFunction(source + trailer, PARAMS, opts);
    } catch (e2) {
      wrapper = vm.compileFunction(source, PARAMS, opts);
    }
  }
  const mod = ctx.module;
  const ret = reflectApply(wrapper, mod.exports, [mod.exports, ctx.require, mod, ctx.filename, ctx.dirname]);
  const value = isArray(ret) && ret[0] === NONCE ? ret[1] : undefined;
  let fn = value;
  let self;
  if (typeof fn !== 'function' || isClass(fn)) {
    // By name among the exports: exports.NAME = fn, module.exports.NAME = fn, module.exports = fn.
    const ex = mod.exports;
    if (ex !== null && (typeof ex === 'object' || typeof ex === 'function') && typeof ex[name] === 'function' && !isClass(ex[name])) {
      fn = ex[name];
      self = ex;
    } else if (typeof ex === 'function' && !isClass(ex) && (ex.name === name || ex.name === '')) {
      fn = ex;
    } else if (ex !== null && typeof ex === 'object' && typeof ex.default === 'function' && !isClass(ex.default) &&
               (ex.default.name === name || ex.default.name === '' || ex.default.name === 'default')) {
      fn = ex.default;       // export default (a, b) => ...
    } else {
      throw notFound(name, code, value, ex);
    }
  }
  const result = reflectApply(fn, self, args);
  return isThenable(result) ? await result : result;
}

// ES module syntax in the code (`export function f`, `import x from 'y'`), which a CommonJS body cannot have:
// the common single-line forms rewritten in place, line for line.  Tried only when the code fails to compile
// on an `export`/`import`; anything left over still fails to compile and reports the original error.
function esmToCjs(code) {
  const from = (m) => `require(${m})`;
  return code.split('\n').map((line) => line
    .replace(/^(\s*)export\s+default\s+(?=(?:async\s+)?function\s*\*?\s*[\p{ID_Start}$_]|class\s+[\p{ID_Start}$_])/u, '$1')
    .replace(/^(\s*)export\s+default\s+/, '$1module.exports.default = ')
    .replace(/^(\s*)export\s+(?=(?:async\s+)?function\b|class\b|const\b|let\b|var\b)/, '$1')
    .replace(/^(\s*)export\s*\{[^}]*\}\s*;?\s*$/, '$1')
    .replace(/^(\s*)import\s+(?:\*\s+as\s+)?([\p{ID_Start}$_][\p{ID_Continue}$]*)\s+from\s+(['"][^'"]+['"])\s*;?/u,
      (m, sp, id, mod) => `${sp}const ${id} = ${from(mod)};`)
    .replace(/^(\s*)import\s*\{([^}]*)\}\s*from\s+(['"][^'"]+['"])\s*;?/,
      (m, sp, names, mod) => `${sp}const {${names.replace(/\s+as\s+/g, ': ')}} = ${from(mod)};`)
    .replace(/^(\s*)import\s+(['"][^'"]+['"])\s*;?/, (m, sp, mod) => `${sp}${from(mod)};`))
    .join('\n');
}

function isThenable(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

// The code's last line as a `return` statement, for the async fallback of body mode, when that is safe: a
// line that starts an expression, cannot be the continuation of the line before, and is code (not the end of
// a multi-line template literal or comment: probed with `@@@`, which only compiles there).
function lastLineReturned(code, compiles) {
  const lines = code.split('\n');
  let i = lines.length - 1;
  while (i >= 0 && lines[i].trim() === '') i--;
  if (i < 0) return null;
  const last = lines[i];
  const s = last.trim();
  if (!/^(?:[\p{ID_Start}$_"'\d!~]|await\b|new\b|typeof\b)/u.test(s)) return null;
  if (/^(?:const|let|var|function|async\s+function|class|if|else|for|while|do|switch|case|default|try|catch|finally|return|throw|break|continue|import|export|yield|debugger|with)\b/.test(s)) return null;
  let p = i - 1;
  while (p >= 0 && lines[p].trim() === '') p--;
  if (p >= 0 && /^\s*(?:for|while|do|else)\b|(?:\belse|\bdo)\s*$/.test(lines[p])) return null;
  const indent = last.slice(0, last.length - last.trimStart().length);
  lines[i] = indent + '@@@' + last.trimStart();
  if (compiles(lines.join('\n'))) return null;
  // In parentheses, so that a line of several statements (`await f(); g()`) is not cut short to its first:
  // that does not compile, and the body runs as it is.
  lines[i] = indent + 'return (' + last.trimStart().replace(/;\s*$/, '') + '\n);';
  return compiles(lines.join('\n')) ? lines.join('\n') : null;
}

const RUN_OPTIONS = { displayErrors: false };

// runOptions: vm's options for the run (a session kernel adds breakOnSigint); filename: the name the code is
// compiled under (a session kernel's `<cell N>`).
async function runBody(code, ctx, runOptions, filename = USER_FILE) {
  // A script whose completion value is the result; require, module, exports, __filename and __dirname are
  // globals, as in `node -e`.
  const g = globalThis;
  g.require = ctx.require;
  g.module = ctx.module;
  g.exports = ctx.module.exports;
  g.__filename = ctx.filename;
  g.__dirname = ctx.dirname;
  const opts = { filename, importModuleDynamically: IMPORT_DYNAMICALLY };
  let script;
  try {
    script = new vm.Script(code, opts);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    if (/\b(?:export|import)\b/.test(e.message)) {
      const cjs = esmToCjs(code);
      if (cjs !== code) return runBody(cjs, ctx, runOptions, filename);
    }
    // Top-level `return` or `await`: the body of an async function.  Its own line 0 holds the function head,
    // so the code's line numbers are unchanged.  The last line becomes a `return` when that is safe, for
    // the completion value.
    const fopts = { ...opts, lineOffset: -1 };
    const wrap = (body) => new vm.Script(`(async function () {\n${body}\n})`, fopts);
    let fnScript = null;
    const compiles = (body) => { try { wrap(body); return true; } catch (e2) { return false; } };
    const withReturn = lastLineReturned(code, compiles);
    if (withReturn !== null) {
      try { fnScript = wrap(withReturn); } catch (e2) { /* the plain body then */ }
    }
    if (fnScript === null) {
      try {
        fnScript = wrap(code);
      } catch (e2) {
        throw /return|await/.test(e.message) ? e2 : e;
      }
    }
    const fn = fnScript.runInThisContext();
    return await fn();
  }
  const result = script.runInThisContext(runOptions || RUN_OPTIONS);
  return isThenable(result) ? await result : result;
}

// ------------------------------------------------------------------------------------------------- main

// The value travels in a box that main() empties: a suspended async frame keeps what it awaited, which would
// keep a 64 MB result (or argument) alive through its serialization.
async function run(box, code, name, args, ctx) {
  box.value = name === null || name === undefined ? await runBody(code, ctx) : await runFunction(code, name, args, ctx);
}

// V8 compiles a function when it is first called, and Node's own (fs.writeSync, process.kill, the tick queue)
// likewise: ~1 ms of a trivial call's ~1.5 ms went there, after its input had arrived. In a pooled sandbox the
// harness waits for its input, so the same paths are run once before: a throwaway context and function, a
// serialization, a write to /dev/null, a signal 0, a tick and an await. Nothing of it is seen by the function (its
// context, module and arguments are made afresh); a cold call pays what it would have paid later anyway.
function warmUp() {
  try {
    const devNull = fs.openSync('/dev/null', 'w');
    try { writeString(devNull, '{"ok":true}\n'); } finally { fs.closeSync(devNull); }
    serialize([1, 'a', { b: null, c: 1.5 }]);
    process.getActiveResourcesInfo();
    reflectApply(processKill, process, [process.pid, 0]);
    process.nextTick(() => {});
    run({ value: undefined }, 'function f(a) { return a; }', 'f', [1], makeContext(process.cwd())).catch(() => {});
  } catch (e) { /* only speed is at stake */ }
}

// The call's module, require and paths for the usual working directory, made before the input comes (a
// pooled sandbox waits for it): ~0.1 ms of a warm call otherwise, most of it cache misses after the wait.
// It is this call's own, as a context made after the input would be: no code has seen it.
let readyContext = null;

function makeReadyContext() {
  try {
    const workdir = process.cwd();
    return { ...makeContext(workdir), workdir };
  } catch (e) {
    return null; /* made after the input then */
  }
}

async function main() {
  let code, name, args, workdir;
  try {
    let req = readInput();
    code = typeof req.code === 'string' ? req.code : '';
    name = req.functionName;
    args = isArray(req.args) ? req.args : [];
    for (const i of req.undefined || []) args[i] = undefined;
    for (const p of req.bigints || []) setBigInt(args, p);
    workdir = typeof req.workdir === 'string' && req.workdir ? req.workdir : process.cwd();
    req = null;
  } catch (e) {
    publishError('HarnessError', `cannot read the call input on fd 4: ${e && e.message}`, '', 1);
    return reflectApply(realExit, process, [1]);
  }
  const ctx = readyContext && readyContext.workdir === workdir ? readyContext : makeContext(workdir);
  readyContext = null;
  tunnelHttps();
  try {
    const box = { value: undefined };
    await run(box, code, name, args, ctx);
    args = null;
    let result = box.value;
    box.value = undefined;
    const text = serialize(result);
    result = null;          // publish() may collect garbage: the value need not survive its serialization
    publish('{"ok":true}\n', text);
    exitStatus = 0;
  } catch (e) {
    if (!published) fail(e);
  }
  finish();
}

if (require.main === module) {
  // main() from the event loop, not while this module loads: Node's start-up finishes first (its tick queue
  // then runs ~0.3 ms sooner after the result), and in a pooled sandbox that happens before the input comes.
  installProcessHooks(); // before anything of the call can exit: not part of the warm-up, which may fail
  warmUp();
  readyContext = makeReadyContext();
  setImmediate(main);
} else {
  // A session kernel (javascript_kernel.js) loads this file as a module for the same runs and conversions.
  module.exports = { runBody, serialize, describeThrown, makeContext, tunnelHttps, USER_FILE };
}
