"""The benchmark is a script (python3 tests/bench/bench.py), not a test suite: pytest skips it."""

collect_ignore_glob = ["*.py"]
