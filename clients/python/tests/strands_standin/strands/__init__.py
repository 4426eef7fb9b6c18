"""A local stand-in for the `strands-agents` package (PyPI is unreachable here): only `strands.sandbox`."""
