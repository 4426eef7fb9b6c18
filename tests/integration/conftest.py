"""Fixtures for the integration suite. The helpers live in fnboxlib.py (shared with tests/security)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fnboxlib  # noqa: E402


@pytest.fixture
def call():
    """call(request_dict_or_raw_text, timeout=60, env=None) -> (result, exit_code, stderr)."""
    return fnboxlib.call


@pytest.fixture(params=fnboxlib.LANGS)
def lang(request):
    """Runs the test once per language."""
    return request.param
