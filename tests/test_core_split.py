"""The core split the way Triton splits it (issue 17): `core/layout.py` keeps the class,
`core/builders.py` the builders of Triton's `LayoutUtils.h`, the private `core/_packing.py` the
column packing and the one bounded cache every plan cache uses; the public paths keep working."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import linear_layout
from linear_layout.core import _packing, builders, layout
from linear_layout.core._packing import BoundedCache

BUILDERS = (
    "identity_standard_nd",
    "product_1d",
    "ensure_layout_not_larger_than",
    "ensure_layout_not_smaller_than",
    "zeros_like",
    "supremum",
    "standard_out_dim_names",
)
CORE = Path(layout.__file__).parent


@pytest.mark.parametrize("name", BUILDERS)
def test_every_builder_lives_in_builders_and_keeps_its_old_paths(name):
    function = getattr(builders, name)
    assert name in builders.__all__
    assert getattr(layout, name) is function  # linear_layout.core.layout.<name>, as before
    if name != "product_1d":  # the top-level package never exported product_1d
        assert getattr(linear_layout, name) is function


@pytest.mark.parametrize("module", ["linear_layout.core.builders", "linear_layout.core.layout", "linear_layout"])
def test_each_module_imports_first_in_a_fresh_interpreter(module):
    """builders.py imports LinearLayout from layout.py, which re-exports the builders: no order breaks."""
    code = f"import {module}; from linear_layout.core.builders import product_1d; print(product_1d([(4, 'r', 'd')]).bases)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(('r', ((1,), (2,))),)", result.stdout


def test_layout_py_keeps_the_class_only():
    tree = ast.parse((CORE / "layout.py").read_text())
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {"LinearLayout", "ColumnAction"} <= defined
    assert not defined & set(BUILDERS)


def _caches(module) -> dict[str, object]:
    """The module-level dictionaries of ``module`` (a BoundedCache is one)."""
    return {name: value for name, value in vars(module).items() if isinstance(value, dict) and name.isupper()}


def test_every_plan_cache_is_one_bounded_cache():
    caches = {**_caches(layout), **_caches(builders)}
    assert set(caches) == {
        "_PRODUCT_PLANS", "_PRODUCT_SEEN", "_TRANSPOSE_PLANS", "_GROW_PLANS", "_SHRINK_PLANS", "_INFER_PLANS"
    }
    assert all(type(cache) is BoundedCache for cache in caches.values())
    # no module of the core clears a dict at a size limit by hand any more
    for path in CORE.glob("*.py"):
        if path.name != "_packing.py":
            assert ".clear()" not in path.read_text(), path.name


def test_a_bounded_cache_never_holds_more_than_its_limit():
    cache: BoundedCache[int, int] = BoundedCache(3)
    for key in range(10):
        assert cache.store(key, key * key) == key * key
        assert len(cache) <= 3 and cache[key] == key * key
    assert _packing.BoundedCache().limit == 4096


def test_products_fill_the_cache_and_stay_correct_when_it_is_emptied():
    a = layout.LinearLayout.identity_1d(4, "lane", "dim0")
    b = layout.LinearLayout.identity_1d(2, "warp", "dim0")
    key = (a._ins, a._outs, b._ins, b._outs)
    layout._PRODUCT_SEEN.pop(key, None)
    layout._PRODUCT_PLANS.pop(key, None)
    first = a * b  # the first product of the signature: computed directly, no plan yet
    assert key in layout._PRODUCT_SEEN and key not in layout._PRODUCT_PLANS
    assert a * b == first and key in layout._PRODUCT_PLANS  # the second builds the plan
    layout._PRODUCT_PLANS.clear()
    assert a * b == first and first.bases == (("lane", ((1,), (2,))), ("warp", ((4,),)))
