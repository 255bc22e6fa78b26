"""pyproject.toml lists its packages by hand (to map dialect/ into the package), so check the
list is complete, and that an installed copy finds its dialect files."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {".".join(p.parent.relative_to(ROOT / "python").parts)
             for p in (ROOT / "python").rglob("__init__.py")}
    assert found | {"linear_layout.dialect"} == listed, "update [tool.setuptools] packages in pyproject.toml"
    assert config["package-dir"]["linear_layout.dialect"] == "dialect"
    assert sorted(p.name for p in (ROOT / "dialect").glob("*.irdl.mlir")) == ["ll.irdl.mlir", "ttg.irdl.mlir"]
