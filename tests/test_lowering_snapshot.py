"""The lowered output of a fixed kernel set (every bench_lowering/bench_codegen kernel and every
lowering lit test) is byte-identical to the stored copy (`tests/lowering_snapshot.py`)."""

from __future__ import annotations

import difflib

import lowering_snapshot


def test_lowered_output_is_byte_identical_to_the_stored_copy():
    stored = lowering_snapshot.stored()
    found = lowering_snapshot.collect()
    assert sorted(found) == sorted(stored), "the kernel set changed: python tests/lowering_snapshot.py --update"
    changed = [name for name in stored if found[name] != stored[name]]
    first = "".join(
        difflib.unified_diff(stored[changed[0]].splitlines(True), found[changed[0]].splitlines(True), n=2)
    )[:4000] if changed else ""
    assert not changed, f"{len(changed)} lowerings changed: {changed[:10]}\n{first}"
