"""`make install` and `make uninstall` (Makefile): the binary, include/fnbox.h, libfnbox.a, libfnbox.so and the
pkg-config files, under PREFIX / DESTDIR / BINDIR / LIBDIR / INCLUDEDIR; then examples/c/call.c built exactly
as its comment and the guide say, `cc call.c -o call $(pkg-config --cflags --libs fnbox)` (and
`fnbox-static`), run, its JSON checked; then uninstall leaves no file behind.

Installs the build $FNBOX belongs to (build/, or build-asan/ in the sanitizer pass) into temporary
directories; nothing is written into the repository (make's `all` finds the build up to date)."""
import json
import os
import subprocess

import pytest

from fnboxlib import FNBOX, REPO, require_binary

BUILD = os.path.relpath(os.path.dirname(FNBOX), REPO)
EXAMPLE = REPO / "examples" / "c" / "call.c"
VERSION = "0.1.0"   # include/fnbox.h's FNBOX_VERSION (the test below checks they agree)

# What `make install` puts under a prefix, relative to it (default directories).
INSTALLED = {
    "bin/fnbox", "include/fnbox.h", "lib/libfnbox.a", f"lib/libfnbox.so.{VERSION}", "lib/libfnbox.so.0",
    "lib/libfnbox.so", "lib/pkgconfig/fnbox.pc", "lib/pkgconfig/fnbox-static.pc",
}


@pytest.fixture(scope="module", autouse=True)
def built():
    require_binary()
    if BUILD.startswith(".."):
        pytest.skip(f"$FNBOX ({FNBOX}) is not a build directory of this checkout: nothing for make to install")
    # Only build/ may be (re)built by the install's `all`: another build directory has its own flags
    # (`make sanitize`), which a plain make would not repeat.
    if BUILD != "build":
        q = subprocess.run(["make", "-q", "-C", str(REPO), f"BUILD={BUILD}", "all"], capture_output=True)
        if q.returncode != 0:
            pytest.fail(f"{BUILD}/ is not up to date: build it first (make sanitize)")


def make(*args):
    out = subprocess.run(["make", "-s", "-C", str(REPO), f"BUILD={BUILD}", "LDCONFIG=:", *args],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"make {' '.join(args)}: exit {out.returncode}\n{out.stdout}{out.stderr}"
    return out


def files_under(root):
    """Every file and symlink under root, relative to it."""
    found = set()
    for d, _, names in os.walk(root):
        for n in names:
            found.add(os.path.relpath(os.path.join(d, n), root))
    return found


def sanitizer_flags(lib):
    """The sanitizer build's library needs its runtimes in the program too (the flags `make sanitize` uses)."""
    needed = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
    return " -fsanitize=address,undefined" if "libasan" in needed else ""


def needed(program):
    out = subprocess.run(["readelf", "-d", program], capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def build_example(tmp, prefix, package, name):
    """examples/c/call.c built with the documented command, in tmp."""
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    cmd = f'cc "{EXAMPLE}" -o {name} $(pkg-config --cflags --libs {package})'
    cmd += sanitizer_flags(prefix / "lib" / "libfnbox.so")
    out = subprocess.run(["sh", "-c", cmd], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{cmd}: exit {out.returncode}\n{out.stdout}{out.stderr}"
    return tmp / name


def run_example(program, *args, env=None):
    out = subprocess.run([str(program), *args], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, **(env or {})))
    assert out.returncode == 0, f"{program}: exit {out.returncode}\n{out.stdout}{out.stderr}"
    return json.loads(out.stdout)


def test_version_matches_the_header():
    header = (REPO / "include" / "fnbox.h").read_text()
    assert f'#define FNBOX_VERSION "{VERSION}"' in header


def test_install_into_a_prefix_then_build_and_run_the_c_example(tmp_path):
    prefix = tmp_path / "prefix"
    make("install", f"PREFIX={prefix}")
    assert files_under(prefix) == INSTALLED
    lib = prefix / "lib"
    assert os.readlink(lib / "libfnbox.so") == "libfnbox.so.0"
    assert os.readlink(lib / "libfnbox.so.0") == f"libfnbox.so.{VERSION}"
    # the shared library exports the C API and nothing else (-fvisibility=hidden, FNBOX_API)
    nm = subprocess.run(["nm", "-D", "--defined-only", str(lib / "libfnbox.so")], capture_output=True, text=True,
                        check=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines() if line.split()[-2] in "TDBR"}
    assert "fnbox_call" in exported and all(n.startswith("fnbox_") for n in exported), sorted(exported)
    pc = (lib / "pkgconfig" / "fnbox.pc").read_text()
    assert f"prefix={prefix}\n" in pc and "libdir=${prefix}/lib\n" in pc, pc
    assert "Requires.private: libseccomp jansson nettle fuse3\n" in pc, pc

    # the installed binary works from there
    req = '{"language": "python", "code": "def f(x):\\n    return x + 1", "args": [1]}'
    out = subprocess.run([str(prefix / "bin" / "fnbox"), "call", "-"], input=req, capture_output=True,
                         text=True, timeout=60)
    assert json.loads(out.stdout)["result"] == 2, out.stdout + out.stderr

    # the shared library: the program needs libfnbox.so.0 at run time (a temporary prefix is not in the
    # loader's path: LD_LIBRARY_PATH; under /usr/local, make install's ldconfig makes it known)
    shared = build_example(tmp_path, prefix, "fnbox", "call")
    assert "libfnbox.so.0" in needed(shared)
    r = run_example(shared, env={"LD_LIBRARY_PATH": str(lib)})
    assert (r["status"], r["result"]) == ("success", 5), r

    # the static library: nothing of fnbox is needed at run time
    static = build_example(tmp_path, prefix, "fnbox-static", "call-static")
    assert not any(n.startswith("libfnbox") for n in needed(static)), needed(static)
    r = run_example(static, '{"language": "python", "code": "def twice(x):\\n    return x * 2", "args": [21]}')
    assert (r["status"], r["result"]) == ("success", 42), r

    make("uninstall", f"PREFIX={prefix}")
    assert files_under(prefix) == set()


def test_destdir_and_directory_overrides(tmp_path):
    stage = tmp_path / "stage"
    dirs = ["PREFIX=/usr", "LIBDIR=/usr/lib/x86_64-linux-gnu", "BINDIR=/usr/sbin",
            "INCLUDEDIR=/opt/fnbox/include"]
    make("install", f"DESTDIR={stage}", *dirs)
    assert files_under(stage) == {
        "usr/sbin/fnbox", "opt/fnbox/include/fnbox.h",
        *("usr/lib/x86_64-linux-gnu/" + f[len("lib/"):] for f in INSTALLED if f.startswith("lib/")),
    }
    # the .pc files name the final directories, not the staging ones
    for name in ("fnbox.pc", "fnbox-static.pc"):
        pc = (stage / "usr/lib/x86_64-linux-gnu/pkgconfig" / name).read_text()
        assert "prefix=/usr\n" in pc and "libdir=${prefix}/lib/x86_64-linux-gnu\n" in pc, pc
        assert "includedir=/opt/fnbox/include\n" in pc and str(stage) not in pc, pc
        assert f"Version: {VERSION}\n" in pc, pc
    make("uninstall", f"DESTDIR={stage}", *dirs)
    assert files_under(stage) == set()
