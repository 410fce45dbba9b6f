"""Helpers shared by the tests and the benchmarks (``tests/`` is on ``sys.path``: the root conftest)."""
