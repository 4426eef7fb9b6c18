"""Fixtures for the integration suite. The helpers live in fnboxlib.py (shared with tests/security)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Importing the fixtures is what makes pytest see them here: `call`, and `lang` over every interpreted
# language (fnboxlib.LANGS).
from fnboxlib import SECURITY_LANGS, WARM_SOCKET, all_langs_fixture, call_fixture  # noqa: E402,F401


@pytest.fixture
def own_cache(cache_dir):
    """The compile cache of a C or C++ suite (its module's cache_dir), for the tests that look into it:
    through a warm server (the warm pass, FNBOX_WARM_SOCKET) calls use the server's cache, not this one."""
    if WARM_SOCKET:
        pytest.skip("the warm server compiles into its own cache")
    return cache_dir


# Suites whose per-language code covers only python and javascript so far: their `lang` tests are collected
# for those two only (deselected for the others) until the suite gains ruby and php entries; then drop it
# from here.
TWO_LANGUAGE_SUITES = set()


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        lang = callspec.params.get("lang") if callspec else None
        if item.path.name in TWO_LANGUAGE_SUITES and lang is not None and lang not in SECURITY_LANGS:
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_terminal_summary(terminalreporter):
    """What checking the answers against docs/openapi.yaml cost (servelib.Server.request, openapi_check.py)."""
    checker = sys.modules.get("openapi_check")
    if checker and checker.stats["answers"]:
        terminalreporter.write_line(f"openapi: {checker.stats['answers']} answers checked against docs/openapi.yaml "
                                    f"in {checker.stats['seconds']:.2f} s of CPU")
