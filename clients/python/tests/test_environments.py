"""Named environments through the Python client, against real `fnbox serve`s and `fnbox call`: a call
request's ``environment`` (remote Executor; local, the file from ``$FNBOX_ENVIRONMENTS``), a Sandbox's and
an aio Sandbox's ``environment=`` session option (its commands, kernels and calls run there), the Strands
adapter passing it through; an unknown name is fnbox's InvalidRequest naming ``environment``."""

import asyncio
import importlib
import json
import sys

import pytest

import fnbox
from conftest import Server
from test_strands import STANDIN, _strands_modules

UNKNOWN = 'environment: unknown environment "gpu" (known: plain, other)'


@pytest.fixture(scope="module")
def env_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("envs") / "environments.json"
    path.write_text(json.dumps({"environments": {"plain": {}, "other": {}}}))
    return str(path)


@pytest.fixture(scope="module")
def env_server(env_file):
    server = Server("127.0.0.1:0", extra=["--warm", "none", "--environments", env_file])
    yield server
    server.stop()


@pytest.fixture
def env_var(env_file, monkeypatch):
    """Local mode's private server and `fnbox call` read the file from FNBOX_ENVIRONMENTS."""
    monkeypatch.setenv("FNBOX_ENVIRONMENTS", env_file)


def test_remote_call(env_server):
    with fnbox.Executor(base_url=env_server.base_url) as ex:
        r = ex.execute({"language": "python", "code": "def f(): return 6 * 7", "environment": "plain"})
        assert r["result"] == 42, r
        with pytest.raises(fnbox.InvalidRequest) as e:
            ex.execute({"language": "python", "code": "def f(): return 1", "environment": "gpu"})
        assert UNKNOWN in str(e.value)


def test_local_call(env_var):
    r = fnbox.call({"language": "python", "code": "def f(): return 2", "options": {"environment": "other"}})
    assert r["result"] == 2, r
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.call({"language": "python", "code": "def f(): return 1", "environment": "gpu"})
    assert UNKNOWN in str(e.value)


def test_sandbox_environment(env_server, env_var):
    with fnbox.Sandbox(base_url=env_server.base_url, environment="plain") as sb:
        assert sb.commands.run("echo in").stdout == "in\n"
    with fnbox.Sandbox(environment="other") as sb:  # local: a private server with $FNBOX_ENVIRONMENTS
        assert sb.run_code("6 * 7", kernel=True).result == 42
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.Sandbox(base_url=env_server.base_url, environment="gpu")
    assert UNKNOWN in str(e.value)


def test_aio_and_strands_pass_it_through(env_server):
    saved = _strands_modules()
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, STANDIN)
    try:
        adapter = importlib.import_module("fnbox.strands")

        async def main():
            async with fnbox.aio.Sandbox(base_url=env_server.base_url, environment="plain") as sb:
                assert (await sb.commands.run("echo aio")).stdout == "aio\n"
            async with adapter.FnboxSandbox(base_url=env_server.base_url, environment="other") as box:
                result = await box.execute("echo strands")
                assert result.exit_code == 0 and result.stdout == "strands\n", result
            with pytest.raises(fnbox.InvalidRequest) as e:
                await adapter.FnboxSandbox(base_url=env_server.base_url, environment="gpu").execute("true")
            assert UNKNOWN in str(e.value)

        asyncio.run(main())
    finally:
        sys.path.remove(STANDIN)
        for k in _strands_modules():
            del sys.modules[k]
        sys.modules.update(saved)
