# fnbox in-sandbox harness for Python (protocol: docs/internals/harness-protocol.md).
#
# Started as `/usr/bin/python3 -I -S /.fnbox/harness.py`; fd 4 holds the call input (one JSON document),
# fd 3 receives the result (one JSON header line, then on success the raw result JSON).  That script is
# python_loader.py when the build compiled this file (then /.fnbox/harness_source.py), and this file otherwise.
#
# Start-up cost drives the shape of this file (measured on Python 3.11, where bare `python3 -c` takes ~10 ms):
# - A script never gets a cached .pyc (and /.fnbox is read-only), so the build ships this file compiled
#   (python_loader.py); where that bytecode does not fit the interpreter, every line here is compiled at
#   every call, ~10 us a line.  Code that only errors and unusual values need lives in the _COLD sections
#   at the end: string literals (tokenized in ~0.1 ms) compiled on first use by _cold().
# - The success path imports only built-in modules and the `_json` accelerator: `import json` would pull in
#   re, enum, functools and collections (~5 ms).  `_ast` (body mode) and `asyncio` (coroutines) load only
#   when needed; errors are formatted without the `traceback` module (~8 ms to import).
# - `_json` is CPython's private module: where it is missing, or lacks a name used here, _COLD['pyjson']
#   puts the json package's public API in its place (slower; tests/integration/test_harness_python.py runs
#   both ways on every Python 3 found).  Python 3.8 or newer.
# - The process leaves with os._exit after publishing the result, skipping interpreter finalization
#   (~1.5 ms), unless atexit handlers or threads need a normal exit (see _exit).
import sys
import posix as _os
import builtins as _builtins
try:
    from _json import (make_scanner as _make_scanner, make_encoder as _make_encoder,
                       encode_basestring as _esc, encode_basestring_ascii as _esc_ascii)
except ImportError:
    _make_scanner = None                    # see _COLD['pyjson']

_RESULT_FD = 3
_INPUT_FD = 4
_scanner = None                 # _make_scanner(_ScanContext), made once by _warm_up
_USER_FILE = 'user_code.py'
_MISSING = object()
_state = {}                     # 'code': the user's source, 'module': the user module's namespace


class _HarnessError(Exception):
    """An error the harness reports itself (FunctionNotFound, SerializationError...)."""

    def __init__(self, etype, message, stack=''):
        Exception.__init__(self, message)
        self.etype, self.message, self.stack = etype, message, stack


_COLD = {}


def _cold(name):
    """Compile a cold section (defined at the end of the file) into this module's globals, once."""
    sec = _COLD[name]
    if sec is not None:
        line, src = sec
        _COLD[name] = None
        exec(compile('\n' * (line - 1) + src, _HARNESS_FILE, 'exec', 0, True), globals())


# ---------------------------------------------------------------------------------------------- input

class _ScanContext:
    # The attributes _json.make_scanner reads: json.loads' defaults.  _make_scanner(_ScanContext)(text, i) ->
    # (value, end); invalid text raises StopIteration (at a value) or ValueError.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float      # 'NaN', 'Infinity', '-Infinity' -> float(...)


def _read_fd(fd):
    st = _os.fstat(fd)
    chunks = []
    if st.st_mode & 0o170000 == 0o100000:
        # A regular file (fnbox's memfd): read from offset 0, wherever the file position was left.
        off = 0
        want = st.st_size + 1
        while True:
            b = _os.pread(fd, want, off)
            if not b:
                break
            chunks.append(b)
            off += len(b)
            want = 1 << 16
    else:
        # 64 KiB first: a buffer below malloc's mmap threshold costs no system call, where a 1 MiB one is an
        # mmap, a shrinking mremap and a munmap on every read (the EOF read too) of a small call's input.
        want = 1 << 16
        while True:
            b = _os.read(fd, want)
            if not b:
                break
            chunks.append(b)
            if len(b) == want:
                want = 1 << 20
    return b''.join(chunks)


def _loads(text):
    i = 0
    while text[i:i + 1] in (' ', '\t', '\n', '\r'):
        i += 1
    try:
        obj, end = (_scanner or _make_scanner(_ScanContext))(text, i)
    except StopIteration as e:
        raise ValueError('invalid JSON at offset %d' % e.value) from None
    except (RecursionError, ValueError):
        # Nesting past the recursion limit, or an int past 4300 digits: the careful loader.
        _cold('input')
        obj, end = _loads_hard(text, i)     # noqa: F821 (cold)
    if end != len(text) and text[end:].strip(' \t\n\r'):
        raise ValueError('extra data after the JSON document at offset %d' % end)
    return obj


# -------------------------------------------------------------------------------------------- output

def _write_all(fd, data):
    mv = memoryview(data)
    n = len(mv)
    off = 0
    while off < n:
        off += _os.write(fd, mv[off:])


# A streamed call's output reaches the caller as it is written (docs/internals/harness-protocol.md, "stream"):
# on a pipe Python would hold it in an 8 KiB block buffer until the end.  Line buffering would cost a
# write(2) per line (a 50 MB loop of short lines: 10x the bare interpreter's time), so the block buffer stays
# and a thread flushes it every _FLUSH_S: a line waits at most that long (plus the GIL's switch interval,
# 5 ms, while the function computes), and a loop of prints still writes in 8 KiB blocks.  The thread lives
# for the process (a kernel's next cell may stream again) and only flushes while _flush['on']; a fork's
# child starts its own.  If no thread can start (the call's pids limit), line buffering it is.
_FLUSH_S = 0.005
_flush = {'on': False, 'pid': 0}


def _flusher():
    import time
    while True:
        time.sleep(_FLUSH_S)
        if _flush['on']:
            for s in (sys.__stdout__, sys.__stderr__):
                if s is not None:
                    try:
                        s.flush()
                    except Exception:
                        pass    # closed or replaced: the user's choice stands


def _line_buffered(on):
    for s in (sys.__stdout__, sys.__stderr__):
        try:
            if s.line_buffering != on:
                s.reconfigure(line_buffering=on)
        except Exception:
            pass                # replaced by something else, or closed: the user's choice stands


def _timed_flush(on):
    _flush['on'] = on
    if not on or _flush['pid'] == _os.getpid():
        return
    try:
        import _thread
        _thread.start_new_thread(_flusher, ())
    except Exception:
        _line_buffered(True)
        return
    if not _flush['pid']:
        _os.register_at_fork(after_in_child=lambda: _timed_flush(_flush['on']))
    _flush['pid'] = _os.getpid()


def _flush_user_streams():
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if s is not None:
            try:
                s.flush()
            except Exception:
                pass


def _trim_heap():
    # glibc raises its mmap threshold each time a large block is freed, so the argument's text and the
    # value, once freed, stay in the heap as resident memory; beside the result memfd's copy they made a
    # 10 MB echo's peak 4 MiB above the input's own (1.13x the bare interpreter's). Before a large result
    # is written, the heap gives them back (ctypes is imported only then: a few ms against ~100 ms for such
    # a result).
    try:
        import ctypes
        ctypes.CDLL(None).malloc_trim(0)
    except Exception:
        pass


def _publish(header, body=''):
    # The function's own output reaches fds 1/2 before the result appears on fd 3.  The body (str) is
    # encoded a slice at a time, so a 64 MB result never exists twice over (text + bytes) next to its copy
    # in the result memfd, which the call's memory limit counts too.  A slice is 256 KiB: its bytes sit
    # beside the text and the memfd's copy (1 MiB slices lifted the sandbox's peak 2.5 MiB on the ASan
    # build; the time is the same).  Lone surrogates can only sit inside string literals:
    # backslashreplace writes them as \udXXX escapes (code point by code point, so slicing cannot split one).
    _flush_user_streams()
    n = len(body)
    if n < (1 << 20):
        _write_all(_RESULT_FD, header + body.encode('utf-8', 'backslashreplace'))
        return
    _trim_heap()
    _write_all(_RESULT_FD, header)
    step = 1 << 18
    for i in range(0, n, step):
        _write_all(_RESULT_FD, body[i:i + step].encode('utf-8', 'backslashreplace'))


def _no_default(o):
    raise TypeError


def _serialize(value):
    try:
        # JSON-native values: the C encoder, no conversions, no cycle bookkeeping.
        text = ''.join(_make_encoder(None, _no_default, _esc, None, ':', ',', False, False, False)(value, 0))
    except (TypeError, ValueError, RecursionError):
        # Values to convert, NaN/Infinity, non-string keys, huge ints, deep nesting, cycles.
        _cold('serialize')
        text = _serialize_full(value)       # noqa: F821 (cold)
    return text                             # str; _publish encodes it


# ---------------------------------------------------------------------------------------- user code

class _SourceLoader:
    """The user module's __loader__: linecache (tracebacks, inspect) gets the user's source from it."""
    __slots__ = ('_source',)

    def __init__(self, source):
        self._source = source

    def get_source(self, name):
        return self._source


class _Quitter:
    """exit() and quit(), which site.py would define (the harness runs with -S)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return 'Use %s() or Ctrl-D (i.e. EOF) to exit' % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


def _add_site_dirs():
    """Once, before the input is read: a warm pool's harness has it done before its call comes."""
    if _state.get('site'):
        return
    _state['site'] = True
    path = sys.path
    v = 'python%d.%d' % sys.version_info[:2]
    # The directories Debian's site.py adds (the user site stays off, as with -I), then the site-packages of a
    # non-Debian build, with the path lines of their .pth files; `import` lines are not run (they cost
    # imports: os, setuptools' distutils shim).
    # An environment's python.paths (one directory, FNBOX_PYTHON_PATH: core/environment.c) come first, over
    # the root's packages, .pth files included (a venv's site-packages has them).
    env = [p for p in _os.environ.get(b'FNBOX_PYTHON_PATH', b'').decode().split(':') if p]  # posix: bytes
    for d in env + ['/usr/local/lib/%s/dist-packages' % v, '/usr/lib/python3/dist-packages',
                    '/usr/lib/%s/dist-packages' % v, '%s/lib/%s/site-packages' % (sys.prefix, v)]:
        try:
            names = _os.listdir(d)
        except OSError:
            continue
        if d not in path:
            path.append(d)
        for n in sorted(names):
            if n.endswith('.pth') and not n.startswith('.'):
                try:
                    with open(d + '/' + n, encoding='utf-8') as f:
                        lines = f.read().splitlines()
                except (OSError, UnicodeDecodeError):
                    continue
                for line in lines:
                    line = line.rstrip()
                    if line and not line.startswith(('#', 'import ', 'import\t')):
                        p = line if line.startswith('/') else d + '/' + line
                        if p not in path and _os.access(p, _os.F_OK):
                            path.append(p)


def _setup_environment(workdir):
    _add_site_dirs()
    path = sys.path
    # Modules in the workspace are importable, after the standard library and the installed packages.
    if workdir not in path:
        path.append(workdir)
    sys.argv = [workdir.rstrip('/') + '/' + _USER_FILE]
    _builtins.exit = _Quitter('exit')
    _builtins.quit = _Quitter('quit')


def _new_user_module(code, workdir):
    mod = type(sys)('user_code')            # __name__ is not '__main__': `if __name__ == ...` blocks stay off
    mod.__file__ = workdir.rstrip('/') + '/' + _USER_FILE
    mod.__loader__ = _SourceLoader(code)
    mod.__builtins__ = _builtins
    sys.modules['user_code'] = mod          # pickle, dataclasses, typing look classes up here
    _state['module'] = ns = mod.__dict__
    return ns


def _settle(r):
    """Await what the function returned if it is awaitable; collect an async generator into a list."""
    t = type(r)
    if hasattr(t, '__await__'):
        import asyncio
        if t.__name__ == 'coroutine':
            return asyncio.run(r)

        async def _await():
            return await r
        return asyncio.run(_await())
    if hasattr(t, '__anext__'):
        import asyncio

        async def _collect():
            return [x async for x in r]
        return asyncio.run(_collect())
    return r


def _run_function(code, name, args, kwargs, ns):
    exec(compile(code, _USER_FILE, 'exec', 0, True), ns)
    fn = ns.get(name, _MISSING)
    if fn is _MISSING or not callable(fn):
        _cold('errors')
        raise _not_found(name, fn, ns)     # noqa: F821 (cold)
    return _settle(fn(*args, **kwargs))


# ---------------------------------------------------------------------------------------------- main

def _warm_up():
    # What a call does first after its input, done before reading it: no cost to a cold call (it would do it
    # anyway) and none at all to a warm pool's, whose harness waits for its input here. The first compile()
    # sets the parser up (~1 ms); the scanner is made once; the first JSON decode and encode, the atexit
    # import and the streams' flush each cost tens of microseconds the first time.
    global _scanner, _atexit
    try:
        compile('pass', _USER_FILE, 'exec', 0, True)
        if _make_scanner is not None:
            _scanner = _make_scanner(_ScanContext)
        _loads('{"a": [1, "b", null, 1.5, true]}')
        _serialize({'a': [1, 'b', None, 1.5, True]})
        import atexit as _atexit
        _flush_user_streams()
    except Exception:
        pass                    # only speed is at stake


def _main():
    for fd in (_RESULT_FD, _INPUT_FD):
        try:
            _os.set_inheritable(fd, False)     # processes the function spawns never see the channels
        except OSError:
            pass
    _add_site_dirs()
    _warm_up()
    try:
        req = _loads(_read_fd(_INPUT_FD).decode('utf-8'))
        code = req.get('code') or ''
        name = req.get('functionName')
        args = req.get('args') or []
        kwargs = req.get('kwargs') or {}
        workdir = req.get('workdir') or _os.getcwd()
        if req.get('stream'):
            _timed_flush(True)
        del req
    except BaseException as e:
        _cold('errors')
        return _input_failure(e)            # noqa: F821 (cold)
    try:
        _os.close(_INPUT_FD)
    except OSError:
        pass
    _state['code'] = code
    _setup_environment(workdir)
    ns = _new_user_module(code, workdir)
    failure = None
    try:
        if name is None:
            _cold('body')
            result = _run_body(code, ns)    # noqa: F821 (cold)
        else:
            result = _run_function(code, name, args, kwargs, ns)
        del args, kwargs
        body = _serialize(result)
        del result
    except BaseException as e:
        failure = e
    if failure is not None:
        _cold('errors')
        return _report(failure)             # noqa: F821 (cold)
    _publish(b'{"ok":true}\n', body)
    return 0


def _exit(status):
    # atexit handlers (logging, multiprocessing, weakref.finalize...) and threads still running need a normal
    # interpreter exit; otherwise skip finalization.  Clearing the user module first closes (and flushes)
    # the files it left open, which finalization would have done.
    atexit = _atexit or __import__('atexit')
    threading = sys.modules.get('threading')
    if atexit._ncallbacks() or (threading is not None and threading.active_count() > 1):
        sys.exit(status)
    try:
        ns = _state.get('module')
        if ns is not None:
            ns.clear()
        _flush_user_streams()
        # Nothing more is written: closing stdout and stderr tells fnbox that the call may end now, before
        # the process's teardown (a warm call's answer then waits for it no longer).
        _os.close(1)
        _os.close(2)
    except BaseException:
        pass
    _os._exit(status)


_HARNESS_FILE = _main.__code__.co_filename
_atexit = None                  # the atexit module, imported by _warm_up


# ---------------------------------------------------------------------------------------- cold code
# Each section is ordinary Python in a string literal, compiled by _cold(name) with its real line numbers.

_COLD['input'] = (sys._getframe().f_lineno, r'''

def _loads_hard(text, i):
    old_digits = _set_int_digits(0)          # big ints arrive exactly, whatever their size
    try:
        try:
            return _make_scanner(_ScanContext)(text, i)
        except RecursionError:
            # The C scanner recurses per nesting level, up to the recursion limit (a fixed C limit since
            # 3.12): parse containers iteratively, scalars with the C scanner.
            return _loads_iterative(text, i)
    except StopIteration as e:
        raise ValueError('invalid JSON at offset %d' % e.value) from None
    finally:
        _set_int_digits(old_digits)


def _loads_iterative(s, i):
    scan = _make_scanner(_ScanContext)
    n = len(s)

    def skip(i):
        while i < n and s[i] in ' \t\n\r':
            i += 1
        return i

    def key_at(i):
        i = skip(i)
        if s[i:i + 1] != '"':
            raise ValueError('expected a string key at offset %d' % i)
        key, i = scan(s, i)
        i = skip(i)
        if s[i:i + 1] != ':':
            raise ValueError("expected ':' at offset %d" % i)
        return key, i + 1

    stack = []                # [container, key of the member being parsed (dicts)]
    while True:
        i = skip(i)
        c = s[i:i + 1]
        if c == '{':
            if s[skip(i + 1):skip(i + 1) + 1] == '}':
                val, i = {}, skip(i + 1) + 1
            else:
                d = {}
                key, i = key_at(i + 1)
                stack.append([d, key])
                continue
        elif c == '[':
            if s[skip(i + 1):skip(i + 1) + 1] == ']':
                val, i = [], skip(i + 1) + 1
            else:
                stack.append([[], None])
                i += 1
                continue
        else:
            val, i = scan(s, i)
        while True:           # attach val; close the containers that end here
            if not stack:
                return val, i
            top = stack[-1]
            cont = top[0]
            if top[1] is None:
                cont.append(val)
            else:
                cont[top[1]] = val
            i = skip(i)
            ch = s[i:i + 1]
            if ch == ',':
                if top[1] is None:
                    i += 1
                else:
                    top[1], i = key_at(i + 1)
                break
            if ch == (']' if top[1] is None else '}'):
                stack.pop()
                val, i = cont, i + 1
                continue
            raise ValueError('expected , or a closing bracket at offset %d' % i)


def _set_int_digits(n):
    get = getattr(sys, 'get_int_max_str_digits', None)
    if get is None:
        return None
    old = get()
    if n is not None:
        sys.set_int_max_str_digits(n)
    return old
''')

_COLD['errors'] = (sys._getframe().f_lineno, r'''

_encode_header = _make_encoder(None, None, _esc_ascii, None, ':', ',', False, False, True)


def _header(etype, message, stack, exit_code):
    h = {'ok': False, 'error': {'type': etype, 'message': message, 'stack': stack}, 'exitCode': exit_code}
    return (''.join(_encode_header(h, 0)) + '\n').encode('ascii')


def _safe_str(e):
    try:
        return str(e)
    except BaseException:
        return '<unprintable %s>' % type(e).__name__


def _describe(o):
    t = type(o)
    name = getattr(t, '__qualname__', None) or t.__name__
    mod = getattr(t, '__module__', None)
    return name if mod in (None, 'builtins') else '%s.%s' % (mod, name)


def _not_found(name, fn, ns):
    have = [k for k, v in ns.items()
            if type(v) is type(_main) and v.__code__.co_filename == _USER_FILE]
    what = ("'%s' is not defined" % name if fn is _MISSING
            else "'%s' is not callable (it is %s)" % (name, _describe(fn)))
    return _HarnessError('FunctionNotFound', '%s in user_code.py; functions defined: %s'
                         % (what, ', '.join(have) if have else '(none)'))


def _user_tb(tb):
    """Drop the leading frames that are not the user's (harness, asyncio) when user frames exist."""
    t = tb
    while t is not None and t.tb_frame.f_code.co_filename != _USER_FILE:
        t = t.tb_next
    if t is not None:
        return t
    while tb is not None and tb.tb_frame.f_code.co_filename == _HARNESS_FILE:
        tb = tb.tb_next
    return tb


def _format_exception(e):
    """The traceback Python would print, with the leading non-user frames dropped."""
    try:
        e.__traceback__ = _user_tb(e.__traceback__)
        return _format_chain(e)
    except BaseException:
        pass
    try:
        import traceback
        import linecache
        code = _state.get('code')
        if code is not None:
            linecache.cache[_USER_FILE] = (len(code), None, code.splitlines(True), _USER_FILE)
        return ''.join(traceback.format_exception(type(e), e, e.__traceback__))
    except BaseException:
        return '%s: %s\n' % (type(e).__name__, _safe_str(e))


# The traceback module's format, written here: importing `traceback` (linecache, tokenize, re...) costs ~8 ms,
# as much as the rest of a call.  Differences: carets mark the whole failing expression (`^^^^`) where
# traceback draws `~~^~~` around operators; classes of the user's module are not prefixed `user_code.` (as
# `__main__.` is not in a script).  Exception groups go to the traceback module.

def _format_chain(e):
    chain = []
    seen = set()
    cur = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, getattr(_builtins, 'BaseExceptionGroup', ())):
            raise TypeError('exception group')
        cause = cur.__cause__
        if cause is not None:
            chain.append((cur, '\nThe above exception was the direct cause of the following exception:\n\n'))
            cur = cause
        elif cur.__context__ is not None and not cur.__suppress_context__:
            chain.append((cur, '\nDuring handling of the above exception, another exception occurred:\n\n'))
            cur = cur.__context__
        else:
            chain.append((cur, None))
            cur = None
    out = []
    for exc, sep in reversed(chain):         # oldest first; sep: how exc relates to the one before it
        if sep:
            out.append(sep)
        if exc.__traceback__ is not None:
            out.append('Traceback (most recent call last):\n')
            out.extend(_format_tb(exc.__traceback__))
        out.extend(_format_exception_only(exc))
    return ''.join(out)


def _source_lines(filename):
    files = _state.setdefault('files', {})
    lines = files.get(filename)
    if lines is None:
        if filename == _USER_FILE:
            lines = (_state.get('code') or '').splitlines()
        else:
            try:
                with open(filename, 'rb') as f:
                    lines = f.read().decode('utf-8', 'replace').splitlines()
            except (OSError, ValueError):
                lines = []
        files[filename] = lines
    return lines


def _format_tb(tb):
    out = []
    last = None
    count = 0
    while tb is not None:
        co = tb.tb_frame.f_code
        lineno = tb.tb_lineno
        key = (co.co_filename, lineno, co.co_name)
        if key != last:
            if count > 3:
                n = count - 3
                out.append('  [Previous line repeated %d more time%s]\n' % (n, 's' if n > 1 else ''))
            last = key
            count = 0
        count += 1
        if count <= 3:
            out.append('  File "%s", line %d, in %s\n' % key)
            lines = _source_lines(co.co_filename)
            line = lines[lineno - 1] if lineno is not None and 0 < lineno <= len(lines) else ''
            stripped = line.strip()
            if stripped:
                out.append('    %s\n' % stripped)
                out.append(_carets(co, tb.tb_lasti, lineno, line, stripped))
        tb = tb.tb_next
    if count > 3:
        n = count - 3
        out.append('  [Previous line repeated %d more time%s]\n' % (n, 's' if n > 1 else ''))
    return out


def _carets(co, lasti, lineno, line, stripped):
    positions = getattr(co, 'co_positions', None)
    if positions is None or lasti < 0:
        return ''
    try:
        start_line, end_line, col, end_col = list(positions())[lasti // 2]
    except (IndexError, ValueError):
        return ''
    if start_line != lineno or end_line != lineno or col is None or end_col is None:
        return ''
    raw = line.encode('utf-8')                   # the columns count UTF-8 bytes
    col = len(raw[:col].decode('utf-8', 'replace'))
    end_col = len(raw[:end_col].decode('utf-8', 'replace'))
    indent = len(line) - len(line.lstrip())
    start, end = col - indent, end_col - indent
    if start < 0 or end <= start or (start == 0 and end >= len(stripped)):
        return ''                                # the whole line: no carets, as traceback does
    return '    %s%s\n' % (' ' * start, '^' * (end - start))


def _format_exception_only(e):
    t = type(e)
    stype = t.__qualname__
    smod = t.__module__
    if smod not in ('__main__', 'builtins', 'user_code'):     # the user's classes read as in a script
        stype = '%s.%s' % (smod, stype)
    out = []
    if isinstance(e, SyntaxError):
        out.append('  File "%s", line %s\n' % (e.filename or '<string>', e.lineno))
        if e.text is not None:
            rtext = e.text.rstrip('\n')
            ltext = rtext.lstrip(' \n\f')
            spaces = len(rtext) - len(ltext)
            out.append('    %s\n' % ltext)
            if e.offset is not None:
                colno = e.offset - 1 - spaces
                end_offset = getattr(e, 'end_offset', None)
                end_colno = (end_offset - 1 - spaces) if end_offset not in (None, 0) else colno + 1
                if end_colno <= colno:
                    end_colno = colno + 1
                if colno >= 0:
                    caretspace = ''.join(c if c.isspace() else ' ' for c in ltext[:colno])
                    out.append('    %s%s\n' % (caretspace, '^' * (end_colno - colno)))
        out.append('%s: %s\n' % (stype, e.msg or '<no detail available>'))
    else:
        value = _safe_str(e)
        out.append('%s: %s\n' % (stype, value) if value else '%s\n' % stype)
    notes = getattr(e, '__notes__', None)
    if isinstance(notes, (list, tuple)):
        for note in notes:
            out.append('%s\n' % (note if isinstance(note, str) else _safe_str(note)))
    return out


def _error_of(e):
    """(type, message, stack, exitCode) for an exception out of the user's code or the harness."""
    if isinstance(e, _HarnessError):
        return e.etype, e.message, e.stack, 1
    if isinstance(e, SyntaxError) and e.text is None and e.filename == _USER_FILE and e.lineno:
        # Errors the compiler finds in an AST (body mode) carry no source line: add it.
        lines = (_state.get('code') or '').splitlines()
        if 0 < e.lineno <= len(lines):
            e.text = lines[e.lineno - 1] + '\n'
    stack = _format_exception(e)
    if isinstance(e, SystemExit):
        c = e.code
        if c is None:
            return 'SystemExit', 'exit code 0', stack, 0
        if isinstance(c, int):
            return 'SystemExit', 'exit code %d' % c, stack, c & 0xFF
        return 'SystemExit', _safe_str(c), stack, 1
    return type(e).__name__, _safe_str(e), stack, 1


def _report(e):
    etype, message, stack, exit_code = _error_of(e)
    del e
    _publish(_header(etype, message, stack, exit_code))
    return exit_code


def _input_failure(e):
    _publish(_header('HarnessError', 'cannot read the call input on fd 4: %s: %s'
                     % (type(e).__name__, _safe_str(e)), '', 1))
    return 1
''')

_COLD['pyjson'] = (sys._getframe().f_lineno, r'''
# Without CPython's _json (another implementation, a build without it, or one lacking a name used above),
# the same calls through the json package's public API, which uses whatever accelerator parts there are.
import json as _pyjson


def _make_scanner(context):
    # context holds json.loads' defaults, which are JSONDecoder()'s
    return _pyjson.JSONDecoder().raw_decode              # (text, i) -> (value, end); ValueError if invalid


def _make_encoder(markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys,
                  allow_nan):
    enc = _pyjson.JSONEncoder(ensure_ascii=encoder is _esc_ascii, check_circular=markers is not None,
                              allow_nan=allow_nan, separators=(item_separator, key_separator), default=default,
                              sort_keys=sort_keys, skipkeys=skipkeys, indent=indent)
    return lambda value, level: (enc.encode(value),)


_esc = _pyjson.JSONEncoder(ensure_ascii=False).encode    # a str -> its JSON string literal
_esc_ascii = _pyjson.JSONEncoder(ensure_ascii=True).encode
''')

_COLD['serialize'] = (sys._getframe().f_lineno, r'''

class _NeedSlowPath(Exception):
    """Raised from the C encoder's default hook for values only the slow encoder writes (Decimal)."""


class _Unserializable(Exception):
    pass


_INF = float('inf')
_FLOAT_REPR = float.__repr__
_INT_REPR = int.__repr__
_ITERABLE_TYPE_NAMES = frozenset(('range', 'dict_keys', 'dict_values', 'dict_items', 'deque'))


def _takes_no_arguments(f):
    import inspect                               # only for objects that have __json__
    try:
        inspect.signature(f).bind()
        return True
    except (TypeError, ValueError):
        return False


def _convert(o, slow):
    """Turn a value JSON has no form for into one it has (the table in the protocol doc).
    dict, list, tuple, str, int, float, bool and None never get here."""
    t = type(o)
    if isinstance(o, (set, frozenset)):
        return list(o)
    if isinstance(o, (bytes, bytearray, memoryview)):
        import binascii
        return {'base64': binascii.b2a_base64(o, newline=False).decode('ascii')}
    mods = sys.modules                           # a type whose module was never imported cannot occur
    m = mods.get('decimal')
    if m is not None and isinstance(o, m.Decimal):
        if not slow:
            raise _NeedSlowPath
        return o                                 # the slow encoder writes its number text
    m = mods.get('datetime')
    if m is not None and isinstance(o, (m.date, m.time)):
        return o.isoformat()
    m = mods.get('enum')
    if m is not None and isinstance(o, m.Enum):
        return o.value
    m = mods.get('uuid')
    if m is not None and isinstance(o, m.UUID):
        return str(o)
    m = mods.get('pathlib')
    if m is not None and isinstance(o, m.PurePath):
        return str(o)
    if t.__name__ in _ITERABLE_TYPE_NAMES or (hasattr(t, '__next__') and hasattr(t, '__iter__')
                                              and not hasattr(o, 'read')):
        return list(o)                           # generators and other iterators, range, dict views, deque
    if (t.__module__ or '').startswith('numpy') and hasattr(o, 'tolist'):
        return o.tolist()                        # numpy arrays and scalars
    if not isinstance(o, type):
        for meth in ('to_dict', '__json__', 'model_dump', 'to_json'):
            f = getattr(o, meth, None)
            if f is not None and callable(f):
                if meth == '__json__' and not _takes_no_arguments(f):
                    continue                     # a framework's __json__(request) (Pyramid) is not for us
                r = f()
                if meth == 'to_json' and isinstance(r, (str, bytes)):
                    try:                         # a JSON text: its value
                        return _loads(r.decode('utf-8') if isinstance(r, bytes) else r)
                    except ValueError:
                        return r
                return r
        if hasattr(t, '__dataclass_fields__'):
            return {f.name: getattr(o, f.name) for f in mods['dataclasses'].fields(o)}
        if hasattr(t, 'keys') and hasattr(t, '__getitem__') and hasattr(t, 'items'):
            return dict(o.items())               # mappings that are not dicts
    if callable(o) or isinstance(o, type(sys)):
        raise _Unserializable('%s is not JSON-serializable' % _describe(o))
    # A plain object's public attributes: `_x` (and name-mangled `__x`) are private by Python's convention
    # and stay out, as the seed's serializer leaves them out (caches, handles, secrets).
    d = getattr(o, '__dict__', None)
    if isinstance(d, dict):
        return {k: v for k, v in d.items() if not (isinstance(k, str) and k.startswith('_'))}
    slots = []
    for k in t.__mro__:
        s = k.__dict__.get('__slots__', ())
        slots.extend((s,) if isinstance(s, str) else s)
    if slots:
        return {n: getattr(o, n) for n in slots if not n.startswith('_') and hasattr(o, n)}
    raise _Unserializable('%s is not JSON-serializable' % _describe(o))


class _Serializer:
    """The C encoder with conversions and cycle checks; past what it can do (NaN/Infinity, Decimal,
    non-string keys, nesting past the recursion limit), an iterative encoder in Python.  Conversions are
    cached by identity: user methods (to_dict...) run once, generators are consumed once."""

    def __init__(self):
        self.cache = {}

    def convert(self, o, slow):
        hit = self.cache.get(id(o))
        if hit is not None:
            return hit[1]
        try:
            r = _convert(o, slow)
        except (_NeedSlowPath, _Unserializable, RecursionError):
            raise               # RecursionError: the C encoder hit the limit; the slow path goes on
        except BaseException as e:
            raise _HarnessError('SerializationError', 'cannot convert %s: %s: %s'
                                % (_describe(o), type(e).__name__, _safe_str(e)), _format_exception(e))
        self.cache[id(o)] = (o, r)
        return r

    def fast_default(self, o):
        return self.convert(o, False)

    def encode(self, value):
        try:
            enc = _make_encoder({}, self.fast_default, _esc, None, ':', ',',
                                     False, False, False)
            return ''.join(enc(value, 0))
        except _Unserializable as e:
            raise _HarnessError('SerializationError', str(e)) from None
        except ValueError as e:
            if 'ircular' in str(e):
                raise _HarnessError('SerializationError', 'circular reference in the result') from None
        except (RecursionError, TypeError, _NeedSlowPath):
            pass
        try:
            return self.slow_encode(value)
        except _Unserializable as e:
            raise _HarnessError('SerializationError', str(e)) from None

    def slow_encode(self, value):
        esc = _esc
        out = []
        w = out.append
        active = set()            # ids of the containers and converted objects on the current path
        frames = []               # [kind (0 list, 1 dict, 2 converted object), iterator, id, first]
        decimal = sys.modules.get('decimal')
        o = value
        while True:
            while True:           # write o, or open the container it is
                t = type(o)
                if t is str:
                    w(esc(o))
                elif o is None:
                    w('null')
                elif o is True:
                    w('true')
                elif o is False:
                    w('false')
                elif t is float or (t is not int and isinstance(o, float)):
                    w(_FLOAT_REPR(o) if o == o and o != _INF and o != -_INF else 'null')
                elif isinstance(o, int):
                    w(_INT_REPR(o))
                elif isinstance(o, str):
                    w(esc(o))
                elif isinstance(o, (list, tuple, dict)):
                    i = id(o)
                    if i in active:
                        raise _HarnessError('SerializationError', 'circular reference in the result')
                    active.add(i)
                    if isinstance(o, dict):
                        w('{')
                        frames.append([1, iter(o.items()), i, True])
                    else:
                        w('[')
                        frames.append([0, iter(o), i, True])
                elif decimal is not None and isinstance(o, decimal.Decimal):
                    w(str(o) if o.is_finite() else 'null')
                else:
                    i = id(o)
                    if i in active:
                        raise _HarnessError('SerializationError', 'circular reference in the result')
                    active.add(i)
                    frames.append([2, None, i, False])
                    o = self.convert(o, True)
                    continue
                break
            while frames:         # find the next value to write
                fr = frames[-1]
                kind = fr[0]
                if kind == 2:
                    frames.pop()
                    active.discard(fr[2])
                    continue
                nxt = next(fr[1], _MISSING)
                if nxt is _MISSING:
                    frames.pop()
                    active.discard(fr[2])
                    w(']' if kind == 0 else '}')
                    continue
                if fr[3]:
                    fr[3] = False
                else:
                    w(',')
                if kind == 0:
                    o = nxt
                else:
                    k, o = nxt
                    w(esc(_json_key(k)))
                    w(':')
                break
            else:
                return ''.join(out)


def _json_key(k):
    # The C encoder's spelling for the keys it accepts (True -> "true"...), str() for the others.
    if isinstance(k, str):
        return k
    if k is True:
        return 'true'
    if k is False:
        return 'false'
    if k is None:
        return 'null'
    if isinstance(k, float):
        return _FLOAT_REPR(k)
    if isinstance(k, int):
        return _INT_REPR(k)
    return str(k)


def _serialize_full(value):
    _cold('errors')
    _cold('input')
    old = _set_int_digits(0)                     # big ints are written exactly, whatever their size
    try:
        return _Serializer().encode(value)
    finally:
        _set_int_digits(old)
''')

_COLD['body'] = (sys._getframe().f_lineno, r'''

def _has_toplevel_return(stmts, _ast):
    skip = (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)
    walk = (_ast.stmt, _ast.excepthandler, getattr(_ast, 'match_case', _ast.stmt))
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, _ast.Return):
            return True
        if isinstance(n, skip):
            continue
        for field in n._fields:
            v = getattr(n, field, None)
            if isinstance(v, list):
                todo.extend(x for x in v if isinstance(x, walk))
    return False


def _raise_toplevel_yield(tree, _ast):
    skip = (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef, _ast.Lambda)
    todo = [tree]
    found = []
    while todo:
        n = todo.pop()
        if isinstance(n, (_ast.Yield, _ast.YieldFrom)):
            found.append((n.lineno, n.col_offset))
        elif not isinstance(n, skip):
            for field in n._fields:
                v = getattr(n, field, None)
                if isinstance(v, list):
                    todo.extend(x for x in v if isinstance(x, _ast.AST))
                elif isinstance(v, _ast.AST):
                    todo.append(v)
    line, col = min(found) if found else (1, 0)
    lines = (_state.get('code') or '').splitlines()
    text = lines[line - 1] + '\n' if 0 < line <= len(lines) else None
    raise SyntaxError("'yield' outside function", (_USER_FILE, line, col + 1, text))


def _run_body(code, ns):
    """Body mode: the value of the last expression statement, or what a top-level `return` returns."""
    import _ast
    tree = compile(code, _USER_FILE, 'exec', _ast.PyCF_ONLY_AST, True)
    body = tree.body
    if _has_toplevel_return(body, _ast):
        # Run the code as the body of a function named <module> (async if it awaits); the statements keep
        # their line numbers.  A last expression statement becomes the return value too.
        if isinstance(body[-1], _ast.Expr):
            last = body[-1]
            ret = _ast.Return(value=last.value)
            ret.lineno, ret.col_offset = last.lineno, last.col_offset
            ret.end_lineno, ret.end_col_offset = last.end_lineno, last.end_col_offset
            body[-1] = ret
        for kind in (_ast.FunctionDef, _ast.AsyncFunctionDef):
            fdef = kind(name='<module>', body=body, decorator_list=[], returns=None, type_comment=None,
                        args=_ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                            kw_defaults=[], kwarg=None, defaults=[]),
                        lineno=1, col_offset=0, end_lineno=body[-1].end_lineno,
                        end_col_offset=body[-1].end_col_offset)
            try:
                co = compile(_ast.Module(body=[fdef], type_ignores=[]), _USER_FILE, 'exec', 0, True)
                break
            except SyntaxError as e:
                # "'await' outside async function" and the like: again, as an async function.
                if kind is _ast.AsyncFunctionDef or not ('await' in e.msg or 'async' in e.msg):
                    raise
        if co.co_consts[0].co_flags & 0x220:    # CO_GENERATOR | CO_ASYNC_GENERATOR: a top-level yield
            _raise_toplevel_yield(tree, _ast)
        exec(co, ns)
        return _settle(ns.pop('<module>')())
    last = body.pop() if body and isinstance(body[-1], _ast.Expr) else None
    aw = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    co = compile(tree, _USER_FILE, 'exec', aw, True)
    co_last = compile(_ast.Expression(body=last.value), _USER_FILE, 'eval', aw, True) if last else None
    CO_COROUTINE = 0x80
    if (co.co_flags | (co_last.co_flags if co_last else 0)) & CO_COROUTINE:
        # Top-level await: both parts run in one event loop.
        import asyncio

        async def _body():
            r = eval(co, ns)
            if co.co_flags & CO_COROUTINE:
                await r
            if co_last is None:
                return None
            r = eval(co_last, ns)
            if co_last.co_flags & CO_COROUTINE:
                r = await r
            return r
        return _settle(asyncio.run(_body()))
    exec(co, ns)
    return _settle(eval(co_last, ns)) if co_last is not None else None
''')

if _make_scanner is None:
    _cold('pyjson')


if __name__ == '__main__':
    try:
        _status = _main()
    except BaseException:
        # The result channel itself failed (fd 3 closed by the function...): fnbox reports NoResult.
        _os._exit(70)
    _exit(_status)
