"""Fixtures for the integration suite. The helpers live in fnboxlib.py (shared with tests/security)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Importing the fixtures is what makes pytest see them here: `call` and `lang`.
from fnboxlib import call_fixture, lang_fixture  # noqa: E402,F401
