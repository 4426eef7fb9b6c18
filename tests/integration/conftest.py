"""Fixtures for the integration suite. The helpers live in fnboxlib.py (shared with tests/security)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Importing the fixtures is what makes pytest see them here: `call`, and `lang` over every interpreted
# language (fnboxlib.LANGS).
from fnboxlib import SECURITY_LANGS, all_langs_fixture, call_fixture  # noqa: E402,F401

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
