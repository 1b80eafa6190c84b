"""tabret benchmarks (issue 11): speed against Python-shaped references, scale, callbacks.

Run everything with ``python3 bench/run.py`` (or ``make bench``); see docs/benchmarks.md.
"""
