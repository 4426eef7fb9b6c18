"""README's install commands, exactly as written: the block marked `<!-- install: debian -->` (Debian 12 without
PyPI: Debian's venv, setuptools and wheel) run line by line in a fresh venv under a temporary HOME, on a copy
of this package at /path/to/fnbox/clients/python; then `import fnbox` from outside the repository and one real
call through the venv's Python.

The block's `sudo apt-get install` line is not run: its packages must be installed here, and
scripts/install-deps.sh must install them (it is the README's set-up command)."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import FNBOX_BIN, PKG_ROOT, REPO

README = PKG_ROOT / "README.md"
MARKER = "<!-- install: debian"
PLACEHOLDER = "/path/to/fnbox"


def documented_block():
    text = README.read_text()
    at = text.find(MARKER)
    assert at >= 0, f"{README} has no block marked {MARKER!r} (the Debian 12 install commands)"
    m = re.compile(r"```sh\n(.*?)```", re.S).search(text, at)
    assert m and text[at:m.start()].count("\n") == 1, f"the line after {MARKER!r} must open a ```sh block"
    lines = [ln for ln in m.group(1).splitlines() if ln.strip()]
    assert lines, "the install block is empty"
    return lines


def apt_packages(line):
    words = line.split("#")[0].split()
    assert words[:3] == ["sudo", "apt-get", "install"], line
    return [w for w in words[3:] if not w.startswith("-")]


def installed(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return out.returncode == 0 and "install ok installed" in out.stdout


def test_debian_install_commands_as_documented(tmp_path):
    lines = documented_block()
    assert lines[0].startswith("sudo apt-get install "), "the block starts with the packages it needs"
    packages = apt_packages(lines[0])
    deps = (REPO / "scripts" / "install-deps.sh").read_text()
    array = re.search(r"^pkgs=\((.*?)^\)", deps, re.S | re.M)
    assert array, "scripts/install-deps.sh has no pkgs=(...) list"
    listed = {w for ln in array.group(1).splitlines() for w in ln.split("#")[0].split()}
    assert set(packages) <= listed, f"scripts/install-deps.sh does not install {set(packages) - listed}"
    if shutil.which("dpkg-query") is None:
        pytest.skip("not a Debian system: the Debian install commands do not apply")
    missing = [p for p in packages if not installed(p)]
    if missing:
        pytest.fail(f"{missing} not installed: run scripts/install-deps.sh")

    # A checkout with only this package in it (pip builds in the source tree: build/, *.egg-info).
    checkout = tmp_path / "fnbox"
    shutil.copytree(PKG_ROOT, checkout / "clients" / "python",
                    ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "PYENV"))}
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1", FNBOX_BIN=FNBOX_BIN)
    outputs = []
    for line in lines[1:]:
        cmd = line.replace(PLACEHOLDER, str(checkout))
        out = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, f"{line}\nexit {out.returncode}\n{out.stdout}{out.stderr}"
        outputs.append(out.stdout)
    assert outputs[-1].strip() == "0.1.0", outputs

    # The venv the block made: fnbox imported from its site-packages, from outside the repository, and a real
    # call through the fnbox binary (local mode, $FNBOX_BIN).
    venvs = [p for p in (home / ".venvs").iterdir()] if (home / ".venvs").is_dir() else []
    assert len(venvs) == 1, f"the block made no venv under ~/.venvs: {venvs}"
    check = ("import fnbox, fnbox.aio, fnbox.strands, json\n"
             "r = fnbox.call({'language': 'python', 'code': 'def f(a, b):\\n    return a * b', 'args': [6, 7]})\n"
             "print(json.dumps({'file': fnbox.__file__, 'result': r['result'], 'status': r['status']}))\n")
    out = subprocess.run([str(venvs[0] / "bin" / "python"), "-c", check], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    got = json.loads(out.stdout)
    assert got["file"].startswith(str(venvs[0])) and "site-packages" in got["file"], got
    assert (got["status"], got["result"]) == ("success", 42), got
