"""Fixtures for the security suite; the helpers are shared with tests/integration (fnboxlib.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

# Importing the fixtures is what makes pytest see them here: `call` and `lang`.
from fnboxlib import call_fixture, lang_fixture  # noqa: E402,F401
