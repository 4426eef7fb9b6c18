'use strict';
// fnbox session kernel for JavaScript (docs/internals/kernels.md).
//
// Started as `node <dir>/kernel.js` with the call harness at <dir>/harness.js, loaded as a module: cells run
// and values convert exactly as a call's body does (runBody, serialize, describeThrown).  Frames on fd 4
// (host -> kernel) and fd 3 (kernel -> host): `<decimal length>\n<payload>`; requests are {"code": "..."},
// answers the call harness's report (a header line, then the value's JSON text on success), after one
// {"ready":true} once loaded.  Cells run in this process's global context, so what one defines (top-level
// const/let included) the next sees, as in the Node REPL.
const fs = require('fs');
const net = require('net');
const path = require('path');

const RESULT_FD = 3;
const INPUT_FD = 4;
const MAX_HEADER = 24;
const harness = require(path.join(__dirname, 'harness.js'));
const RUN_OPTIONS = { displayErrors: false, breakOnSigint: true };

function send(payload) {
  const body = Buffer.from(payload, 'utf8');
  const buf = Buffer.concat([Buffer.from(`${body.length}\n`), body]);
  let off = 0;
  while (off < buf.length) off += fs.writeSync(RESULT_FD, buf, off, buf.length - off);
}

function drained(stream) {
  // Pipes are written synchronously on Linux; this only waits when one was full.
  return stream.writableLength ? new Promise((resolve) => stream.once('drain', resolve)) : null;
}

function cleanStack(stack) {
  return String(stack).split('\n').filter((l) => !l.includes(__filename)).join('\n');
}

function errorHeader(e) {
  const d = harness.describeThrown(e);
  let type = d.type;
  if (e && e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') type = 'KeyboardInterrupt';
  return JSON.stringify({ ok: false, error: { type, message: d.message, stack: cleanStack(d.stack) }, exitCode: 1 }) + '\n';
}

// SIGINT, the host's interrupt (docs/internals/kernels.md).  vm's breakOnSigint breaks into a cell's
// synchronous run through Node's SIGINT watchdog thread, which vm starts and joins around every run: 40-200 us
// of each execute, most of its overhead.  So the kernel holds the watchdog running, through the binding Node's
// REPL uses (process.binding('contextify')): a run then only registers with it.  While the kernel holds it,
// the watchdog owns SIGINT, and a signal that comes while no run is registered (a cell awaiting) only sets
// its pending flag, which the cell's poll reads.  That holds only while no SIGINT listener exists: with one,
// libuv takes the signal, and vm takes the listeners off around each run, leaving SIGINT at its default
// (death) for the run if the watchdog is not started then.  So when a cell has added a listener, the kernel
// lets the watchdog go and listens as well (the listeners are taken off and put back around the stop, which
// would otherwise leave Node's exit handler in libuv's place); when they are gone, it holds it again.
// Without the binding the kernel always listens.
const watchdog = (() => {
  try {
    const c = process.binding('contextify');
    const fns = ['startSigintWatchdog', 'stopSigintWatchdog', 'watchdogHasPendingSigint'];
    return fns.every((f) => typeof c[f] === 'function') ? c : null;
  } catch (e) {
    return null;
  }
})();
const POLL_MS = 20;
let held = false;
// The cell being awaited, when SIGINT comes outside vm's own watch (breakOnSigint covers synchronous code).
let interruptCurrent = null;
function onSigint() { if (interruptCurrent) interruptCurrent(); }

// Takes the watchdog's pending signal, if any (a stop that leaves it started clears the flag).
function takePendingSigint() {
  watchdog.startSigintWatchdog();
  return watchdog.stopSigintWatchdog();
}

function armSigint() {
  const theirs = process.listeners('SIGINT').filter((l) => l !== onSigint).length;
  if (watchdog && theirs === 0) {
    if (held) return;
    process.removeListener('SIGINT', onSigint); // libuv lets go of SIGINT (if it held it)...
    watchdog.startSigintWatchdog(); // ...and the watchdog's handler takes it
    held = true;
    takePendingSigint();
    return;
  }
  if (held) {
    const listeners = process.rawListeners('SIGINT');
    process.removeAllListeners('SIGINT');
    watchdog.stopSigintWatchdog();
    held = false;
    for (const l of listeners) process.addListener('SIGINT', l);
  }
  if (!process.listeners('SIGINT').includes(onSigint)) process.on('SIGINT', onSigint);
}

// While a cell awaits: a signal the held watchdog noted, or a listener the cell added.
function pollSigint() {
  if (!held) return;
  if (process.listenerCount('SIGINT') > 0) {
    armSigint();
  } else if (watchdog.watchdogHasPendingSigint() && takePendingSigint()) {
    onSigint();
  }
}

// A rejection nobody handles, after its cell has answered: reported on stderr, the kernel goes on.
process.on('unhandledRejection', (r) => { process.stderr.write(`Uncaught (in promise) ${harness.describeThrown(r).stack || r}\n`); });
process.on('uncaughtException', (e) => { process.stderr.write(`Uncaught ${harness.describeThrown(e).stack || e}\n`); });

// Each cell is compiled under a name of its own, so that a function defined in an earlier cell is shown at
// its own cell's line in a stack.
let cells = 0;

// Tells the host where this cell's output begins on fds 1/2: what the kernel wrote before (a timer, after its
// cell) is not this cell's.  The streams' queues first, so that nothing written before comes after it.
async function mark(text) {
  for (const s of [process.stdout, process.stderr]) {
    const wait = drained(s);
    if (wait) await wait;
  }
  for (const fd of [1, 2]) {
    try { fs.writeSync(fd, text); } catch (e) { /* closed by the code: nothing of the cell's comes there */ }
  }
}

async function runCell(code, ctx, text) {
  armSigint();
  await mark(text);
  const filename = `<cell ${++cells}>`;
  const interrupted = new Promise((resolve, reject) => {
    interruptCurrent = () => {
      const e = new Error('Script execution interrupted.');
      e.code = 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
      reject(e);
    };
  });
  const poll = setInterval(pollSigint, POLL_MS);
  let payload;
  try {
    const value = await Promise.race([harness.runBody(code, ctx, RUN_OPTIONS, filename), interrupted]);
    payload = '{"ok":true}\n' + harness.serialize(value);
  } catch (e) {
    payload = errorHeader(e);
  }
  clearInterval(poll);
  interruptCurrent = null;
  for (const s of [process.stdout, process.stderr]) {
    const wait = drained(s);
    if (wait) await wait;
  }
  send(payload);
}

function main() {
  armSigint();
  harness.tunnelHttps(); // permissions.network: https through fnbox's proxy, as in a call
  const ctx = harness.makeContext(process.cwd());
  const input = new net.Socket({ fd: INPUT_FD, readable: true, writable: false });
  let pending = Buffer.alloc(0);
  let queue = Promise.resolve();
  input.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      const nl = pending.indexOf(10);
      if (nl < 0 || nl > MAX_HEADER) {
        if (nl > MAX_HEADER || pending.length > MAX_HEADER) process.exit(70);
        return;
      }
      const len = Number(pending.subarray(0, nl).toString());
      if (pending.length < nl + 1 + len) return;
      const req = JSON.parse(pending.subarray(nl + 1, nl + 1 + len).toString('utf8'));
      pending = pending.subarray(nl + 1 + len);
      queue = queue.then(() => runCell(typeof req.code === 'string' ? req.code : '', ctx,
        typeof req.mark === 'string' ? req.mark : ''));
    }
  });
  input.on('end', () => process.exit(0));
  send('{"ready":true}\n');
}

main();
