"""Build step: the Python harness compiled once, for interpreters of the builder's bytecode version.

    harness_bytecode.py SOURCE OUT   (run by the Python the sandbox will start: /usr/bin/python3 -I -S)

OUT is the interpreter's magic number (4 bytes) and the marshalled code object of SOURCE, compiled under the
name the source has in the sandbox (/.fnbox/harness_source.py: the harness tells its own frames apart by
it). The sandbox's loader (src/harness/python_loader.py) runs it only when its magic is the running
interpreter's, and compiles the source otherwise; marshal's format is fixed for one magic number.
"""
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER


def main():
    src_path, out_path = sys.argv[1], sys.argv[2]
    with open(src_path, 'rb') as f:
        code = compile(f.read(), '/.fnbox/harness_source.py', 'exec', dont_inherit=True)
    tmp = out_path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(MAGIC_NUMBER + marshal.dumps(code))
    os.replace(tmp, out_path)


if __name__ == '__main__':
    main()
