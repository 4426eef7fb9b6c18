"""Fixtures for the security suite; the helpers are shared with tests/integration (fnboxlib.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

import fnboxlib  # noqa: E402


@pytest.fixture
def call():
    return fnboxlib.call


@pytest.fixture(params=fnboxlib.LANGS)
def lang(request):
    return request.param
