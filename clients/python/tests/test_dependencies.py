"""Dependencies on demand through the Python client, against real `fnbox serve`s and `fnbox call` and a REAL
PEP 503 index on loopback: the integration suite's fixture wheels (fixbase 1.0.0; fixdep 2.1.0, which
requires fixbase), built and served by tests/integration/registrylib.py. The environments file's entry
"host" gives the host's environment that index; "bare" has none.

- A call request's ``dependencies`` (remote Executor; local ``fnbox.call``, at the root or in ``options``)
  installs once (``meta.dependencies.python.cache`` miss, then hit on the same layer).
- ``dependencies=`` on Sandbox, aio.Sandbox and the Strands adapter: the session's commands, kernels and
  calls import the packages.
- No index for the environment: fnbox's InvalidRequest naming ``dependencies`` and the setting."""

import asyncio
import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

import fnbox
from conftest import REPO, Server
from test_strands import STANDIN, _strands_modules

sys.path.insert(0, str(REPO / "tests" / "integration"))
import registrylib  # noqa: E402  (the integration suite's index: wheels built from its fixtures)

IMPORT_FIXDEP = "def f():\n    import fixdep\n    return fixdep.VALUE\n"
FIXDEP_VALUE = "fixdep 2.1.0 on base 1.0.0"
PRINT_FIXDEP = "python3 -c 'import fixdep; print(fixdep.VALUE)'"
NO_INDEX = "dependencies.python: no package index configured for environment bare: set `indexes.python`"


@pytest.fixture(scope="module")
def deps_env():
    """The index, an environments file naming it, and a dependency cache of this module's own (first calls
    miss), both in the environment every fnbox started here inherits (FNBOX_CACHE_DIR, FNBOX_ENVIRONMENTS:
    local mode's `fnbox call` and private servers read them). A sandbox's init (nobody, under root) opens a
    layer by its path, so the cache's parents are 0755 (pytest's own temp directories are 0700)."""
    root = tempfile.mkdtemp(prefix="fnbox-py-deps-")
    os.chmod(root, 0o755)
    index = None
    try:
        wheels = registrylib.build_wheels(Path(root) / "wheels")
        index = registrylib.IndexServer(registrylib.simple_index(wheels, Path(root) / "site"))
        env_file = os.path.join(root, "environments.json")
        with open(env_file, "w") as f:
            json.dump({"environments": {"host": {"indexes": {"python": index.url}}, "bare": {}}}, f)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("FNBOX_CACHE_DIR", os.path.join(root, "cache"))
            mp.setenv("FNBOX_ENVIRONMENTS", env_file)
            yield env_file
    finally:
        if index is not None:
            index.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def deps_server(deps_env):
    server = Server("127.0.0.1:0", extra=["--warm", "none", "--environments", deps_env])
    yield server
    server.stop()


def python_meta(result):
    return (result.get("meta") or {}).get("dependencies", {}).get("python")


def test_remote_call(deps_server):
    with fnbox.Executor(base_url=deps_server.base_url) as ex:
        first = ex.execute({"language": "python", "code": IMPORT_FIXDEP, "timeout": 120,
                            "dependencies": {"python": ["fixdep==2.1.0"]}})
        assert first["result"] == FIXDEP_VALUE, first
        meta = python_meta(first)
        assert meta["cache"] == "miss" and len(meta["layer"]) == 64, first["meta"]
        second = ex.execute({"language": "python", "code": IMPORT_FIXDEP,
                             "options": {"dependencies": {"python": ["fixdep==2.1.0"]}}})
        assert second["result"] == FIXDEP_VALUE, second
        assert python_meta(second) == {**python_meta(second), "cache": "hit", "layer": meta["layer"]}
        with pytest.raises(fnbox.InvalidRequest) as e:
            ex.execute({"language": "python", "code": IMPORT_FIXDEP, "environment": "bare",
                        "dependencies": {"python": ["fixdep"]}})
        assert e.value.message.startswith(NO_INDEX), e.value.message


def test_local_call(deps_env):
    first = fnbox.call({"language": "python", "code": IMPORT_FIXDEP, "timeout": 120,
                        "options": {"dependencies": {"python": ["fixdep>=2"]}}})
    assert first["result"] == FIXDEP_VALUE and python_meta(first)["cache"] == "miss", first
    second = fnbox.call({"language": "python", "code": IMPORT_FIXDEP, "dependencies": {"python": ["fixdep>=2"]}})
    assert python_meta(second)["cache"] == "hit" and python_meta(second)["layer"] == python_meta(first)["layer"]
    failed = fnbox.call({"language": "python", "code": "def f():\n    return 1\n", "timeout": 120,
                         "dependencies": {"python": ["nosuchpkg==1.0"]}})
    assert failed["status"] == "error" and failed["error"]["type"] == "DependencyInstallFailed", failed
    assert "No matching distribution found for nosuchpkg" in failed["error"]["message"]
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.call({"language": "python", "code": IMPORT_FIXDEP, "environment": "bare",
                    "dependencies": {"python": ["fixdep"]}})
    assert e.value.message.startswith(NO_INDEX), e.value.message


def test_sandbox_dependencies(deps_server):
    # a tuple is sent as the list fnbox reads
    with fnbox.Sandbox(base_url=deps_server.base_url, dependencies={"python": ("fixdep",)}, timeout=120) as sb:
        r = sb.commands.run(PRINT_FIXDEP)
        assert r.exit_code == 0 and r.stdout == FIXDEP_VALUE + "\n", r
        assert sb.run_code("import fixdep\nfixdep.VALUE", kernel=True).result == FIXDEP_VALUE
        assert sb.call(IMPORT_FIXDEP)["result"] == FIXDEP_VALUE
    with fnbox.Sandbox(dependencies={"python": ["fixbase==1.0.0"]}, timeout=120) as sb:  # local: a private server
        assert sb.run_code("import fixbase\nfixbase.BASE", kernel=True).result == "base 1.0.0"
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.Sandbox(base_url=deps_server.base_url, environment="bare", dependencies={"python": ["fixdep"]})
    assert NO_INDEX in str(e.value)


def test_aio_and_strands_pass_it_through(deps_server):
    saved = _strands_modules()
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, STANDIN)
    try:
        adapter = importlib.import_module("fnbox.strands")
        deps = {"python": ["fixdep==2.1.0"]}

        async def main():
            async with fnbox.aio.Sandbox(base_url=deps_server.base_url, dependencies=deps, timeout=120) as sb:
                assert (await sb.commands.run(PRINT_FIXDEP)).stdout == FIXDEP_VALUE + "\n"
            async with adapter.FnboxSandbox(base_url=deps_server.base_url, dependencies=deps, timeout=120) as box:
                result = await box.execute(PRINT_FIXDEP)
                assert result.exit_code == 0 and result.stdout == FIXDEP_VALUE + "\n", result
            with pytest.raises(fnbox.InvalidRequest) as e:
                await adapter.FnboxSandbox(base_url=deps_server.base_url, environment="bare",
                                           dependencies=deps).execute("true")
            assert NO_INDEX in str(e.value)

        asyncio.run(main())
    finally:
        sys.path.remove(STANDIN)
        for k in _strands_modules():
            del sys.modules[k]
        sys.modules.update(saved)
