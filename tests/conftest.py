"""Hypothesis profiles for the test suite.

Two profiles, chosen with the ``HYPOTHESIS_PROFILE`` environment variable:

* ``ci`` (the default): 200 examples per property, no per-example deadline (CI machines are
  slow and noisy), fresh random examples each run, and a reproduction blob printed on failure.
* ``thorough``: the same with 10,000 examples per property, for a long local run::

      HYPOTHESIS_PROFILE=thorough .venv/bin/python -m pytest tests/test_algebra_properties.py

A test that sets ``max_examples`` itself opts out of the profiles; the algebra tests do not.
"""

import os

from hypothesis import HealthCheck, settings

_COMMON = dict(
    deadline=None,
    derandomize=False,
    print_blob=True,
    # Drawing a layout takes many small choices; on a loaded CI machine that must not count as
    # a failing health check (the tests themselves have no deadline either).
    suppress_health_check=[HealthCheck.too_slow],
)

settings.register_profile("ci", max_examples=200, **_COMMON)
settings.register_profile("thorough", max_examples=10_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
