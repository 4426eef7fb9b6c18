# fnbox: starts the Python harness. Python compiles a script's code at every start (~2.5 ms for the
# harness), so fnbox also ships the harness compiled at build time: this file is the script the
# interpreter starts (/.fnbox/harness.py, or a session run's own directory); beside it, harness.pyc is
# the builder's magic number and the marshalled code of harness_source.py. The code runs only when that
# magic is this interpreter's (marshal's format is fixed for one); otherwise, or if it is damaged, the
# source is compiled. Either way the harness runs as __main__. (src/lang/python.c; without bytecode the
# source itself is the script.)
import sys
import marshal


def _fnbox_harness(here):
    try:
        with open(here + 'harness.pyc', 'rb') as f:
            b = f.read()
        if b[:4] == sys.modules['_frozen_importlib_external'].MAGIC_NUMBER:
            return marshal.loads(memoryview(b)[4:])
    except Exception:
        pass
    with open(here + 'harness_source.py', 'rb') as f:
        return compile(f.read(), here + 'harness_source.py', 'exec', 0, True)


exec(_fnbox_harness(sys.argv[0].rpartition('/')[0] + '/'))
