# fnbox session kernel for Python (docs/internals/kernels.md).
#
# Started as `/usr/bin/python3 -I -S <dir>/kernel.py` with the call harness at <dir>/harness.py, which it
# loads as a module: cells run and values convert exactly as a call's body does (_run_body, _serialize,
# _error_of), with no second copy of that code.  Frames on fd 4 (host -> kernel) and fd 3 (kernel -> host):
# `<decimal length>\n<payload>`; requests are {"code": "..."}, answers the call harness's report (a header
# line, then the value's JSON text on success), after one {"ready":true} once loaded.
import sys
import posix as _os
import _signal
import linecache                         # each cell's source, for tracebacks the cells format themselves

_RESULT_FD = 3
_INPUT_FD = 4
_MAX_HEADER = 24                         # digits of a frame's length, and the newline


def _load_harness():
    path = __file__.rsplit('/', 1)[0] + '/harness.py'
    with open(path, encoding='utf-8') as f:
        src = f.read()
    mod = type(sys)('fnbox_harness')     # not '__main__': the harness's own main does not run
    mod.__file__ = path
    sys.modules['fnbox_harness'] = mod
    exec(compile(src, path, 'exec', 0, True), mod.__dict__)
    mod._cold('body')
    mod._cold('errors')
    return mod


_h = _load_harness()


def _idle(signum, frame):
    pass


# The host interrupts a cell with SIGINT.  While a cell runs, Python's own handler raises KeyboardInterrupt
# (a C function: no kernel frame in the traceback); between cells a SIGINT (a cell that ended just as its
# timeout fired) is dropped, so it never breaks the protocol.  A handler the cell installed itself is left
# alone.
def _arm():
    if _signal.getsignal(_signal.SIGINT) is _idle:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def _disarm():
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _idle)


def _read_exact(n):
    parts = []
    while n > 0:
        b = _os.read(_INPUT_FD, min(n, 1 << 20))
        if not b:
            return None
        parts.append(b)
        n -= len(b)
    return b''.join(parts)


def _read_frame():
    head = b''
    while not head.endswith(b'\n'):
        c = _os.read(_INPUT_FD, 1)
        if not c or len(head) > _MAX_HEADER:
            return None
        head += c
    body = _read_exact(int(head))
    return None if body is None else _h._loads(body.decode('utf-8'))


def _send(payload):
    _h._flush_user_streams()             # the cell's output reaches fds 1/2 before its result reaches fd 3
    _h._write_all(_RESULT_FD, b'%d\n' % len(payload) + payload)


# Each cell is compiled under a name of its own, `<cell N>`, whose source stays known (to the harness's
# traceback, and to linecache for the cells' own traceback/inspect): a function defined in an earlier cell
# shows its own cell's lines.
_cells = {}


def _mark(mark):
    # Tells the host where this cell's output begins on fds 1/2: what the kernel wrote before (a thread, after
    # its cell) is not this cell's.  Its own buffers first, so that nothing written before comes after it.
    _h._flush_user_streams()
    for fd in (1, 2):
        try:
            _os.write(fd, mark)
        except OSError:                  # the code closed it: nothing of the cell's comes there either
            pass


def _run_cell(code, ns):
    name = '<cell %d>' % (len(_cells) + 1)
    _cells[name] = code.splitlines()
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    _h._USER_FILE = name                 # the file the harness compiles the code as, and looks for in tracebacks
    _h._state['code'] = code             # source lines for tracebacks and syntax errors
    _h._state['files'] = dict(_cells)    # (the harness's cache of files' lines: the cells', no stale others)
    try:
        _arm()
        try:
            value = _h._run_body(code, ns)
        finally:
            _disarm()
        return b'{"ok":true}\n' + _h._serialize(value).encode('utf-8', 'backslashreplace')
    except BaseException as e:           # KeyboardInterrupt and SystemExit too: the kernel goes on
        etype, message, stack, exit_code = _h._error_of(e)
        return _h._header(etype, message, stack, exit_code if exit_code else 1)


def _main():
    for fd in (_RESULT_FD, _INPUT_FD):
        _os.set_inheritable(fd, False)   # what the cells spawn never sees the channels
    workdir = _os.getcwd()
    _h._setup_environment(workdir)
    ns = _h._new_user_module('', workdir)
    _signal.signal(_signal.SIGINT, _idle)
    _send(b'{"ready":true}\n')
    while True:
        try:
            req = _read_frame()
        except KeyboardInterrupt:
            continue
        if req is None:                  # EOF: the host is done with us
            _os._exit(0)
        try:
            _h._timed_flush(bool(req.get('stream')))
            _mark((req.get('mark') or '').encode())
            payload = _run_cell(req.get('code') or '', ns)
        except KeyboardInterrupt:        # between the cell's end and here
            payload = _h._header('KeyboardInterrupt', '', '', 1)
        _disarm()
        _send(payload)


_main()
