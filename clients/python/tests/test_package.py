"""Packaging: pyproject.toml, `pip install clients/python` into a temp venv (offline, never PyPI),
import from PYTHONPATH, standard library only, and the oldest/newest other Pythons found here."""

import ast
import glob
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from conftest import FNBOX_BIN, PKG_ROOT

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None


def test_pyproject():
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11")
    with open(PKG_ROOT / "pyproject.toml", "rb") as f:
        meta = tomllib.load(f)
    project = meta["project"]
    assert project["name"] == "fnbox"
    assert project["dependencies"] == []
    assert project["requires-python"] == ">=3.9"
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"


def test_standard_library_only():
    stdlib = set(sys.stdlib_module_names)
    for path in (PKG_ROOT / "fnbox").glob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                # `strands` only inside try/except ImportError (fnbox/strands.py)
                assert top in stdlib or top == "fnbox" or (top == "strands" and path.name == "strands.py"), \
                    "%s imports %s" % (path.name, name)


def test_imports_from_pythonpath():
    code = "import fnbox, fnbox.aio, fnbox.strands; print(fnbox.__file__)"
    env = dict(os.environ, PYTHONPATH=str(PKG_ROOT), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(PKG_ROOT / "fnbox" / "__init__.py")


def _have_offline_build():
    return all(importlib.util.find_spec(m) is not None for m in ("pip", "setuptools"))


def test_pip_install_into_a_venv(tmp_path):
    if not _have_offline_build():
        pytest.skip("pip or setuptools is not installed: no offline build (tests above cover PYTHONPATH)")
    src = tmp_path / "src"   # a copy: building leaves build/ and *.egg-info beside the sources
    shutil.copytree(PKG_ROOT, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-m", "pip", "--python", py, "install", "--no-index", "--no-build-isolation",
                          "--no-deps", "-q", str(src)], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    check = ("import fnbox, fnbox.aio, fnbox.strands, os\n"
             "assert 'site-packages' in fnbox.__file__, fnbox.__file__\n"
             "assert os.path.exists(os.path.join(os.path.dirname(fnbox.__file__), 'py.typed'))\n"
             "r = fnbox.call({'language': 'python', 'code': 'def f(): return 7'}, binary=%r)\n"
             "assert r['result'] == 7, r\n"
             "print(fnbox.__version__)\n") % FNBOX_BIN
    out = subprocess.run([py, "-c", check], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0.1.0"


SMOKE = r'''
import asyncio, sys
import fnbox, fnbox.aio, fnbox.strands
assert fnbox.call({"language": "python", "code": "def f(a): return a * 2", "args": [21]})["result"] == 42
with fnbox.Sandbox() as sb:
    out = []
    r = sb.commands.run("echo hi; exit 3", on_stdout=out.append)
    assert (r.exit_code, out) == (3, ["hi\n"]), r
    sb.files.write("a/b.txt", b"x")
    assert sb.files.read("a/b.txt") == b"x"
    try:
        sb.commands.run("sleep 3", timeout=0.3)
        raise AssertionError("no timeout")
    except fnbox.CommandTimeout as e:
        assert isinstance(e, TimeoutError)
    try:
        sb.files.read("nope")
        raise AssertionError("no error")
    except FileNotFoundError:
        pass
async def main():
    async with fnbox.aio.Sandbox() as sb:
        assert (await sb.commands.run("echo a")).stdout == "a\n"
        t = asyncio.ensure_future(sb.commands.run("sleep 2"))
        await asyncio.sleep(0.2)
        t.cancel()
        try:
            await t
        except asyncio.CancelledError:
            pass
        try:
            await sb.commands.run("sleep 3", timeout=0.3)
        except asyncio.TimeoutError:
            pass
    async with fnbox.strands.FnboxSandbox() as b:
        assert (await b.execute("exit 5")).exit_code == 5
asyncio.run(main())
print("ok", sys.version_info[0], sys.version_info[1])
'''


def _other_pythons():
    """The oldest (>= 3.9) and newest other CPython found here (pyenv's or the system's)."""
    found = {}
    roots = [os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")]
    for pattern in [os.path.join(r, "versions", "3.*", "bin", "python3") for r in roots] + ["/usr/bin/python3.*"]:
        for path in glob.glob(pattern):
            if not os.access(path, os.X_OK) or path.endswith("-config"):
                continue
            try:
                v = subprocess.run([path, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                                   text=True, timeout=10).stdout.split()
            except (OSError, subprocess.TimeoutExpired):
                continue
            if len(v) == 2 and (int(v[0]), int(v[1])) >= (3, 9) and (int(v[0]), int(v[1])) != sys.version_info[:2]:
                found.setdefault((int(v[0]), int(v[1])), path)
    if not found:
        return []
    keys = sorted(found)
    return [found[k] for k in sorted({keys[0], keys[-1]})]


@pytest.mark.parametrize("python", _other_pythons() or [None])
def test_other_python_versions(python):
    if python is None:
        pytest.skip("no other Python >= 3.9 on this machine")
    env = dict(os.environ, PYTHONPATH=str(PKG_ROOT), PYTHONDONTWRITEBYTECODE="1", FNBOX_BIN=FNBOX_BIN)
    out = subprocess.run([python, "-c", SMOKE], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok 3 ")
