"""The `memref` ops: loads and stores, workgroup allocations, views of dynamic shared memory.

Ops: load store, alloc (workgroup memory only), extract_aligned_pointer_as_index (the buffer's
byte address; global arguments sit at ``memory.GLOBAL_BASE_ADDRESS`` on), view (of workgroup bytes, sharing them,
or of ``gpu.dynamic_shared_memory``, at a uniform byte shift, to a static shape), atomic_rmw (global or workgroup memory: one
read-modify-write per active thread, in thread order, returning the old values), generic_atomic_rmw (the same, its
region run for one thread at a time) atomic_yield.
"""

from __future__ import annotations

import numpy as np
from mlir.dialects.arith import AtomicRMWKind

from ..errors import UnsupportedOp
from ..machine import handles, location_of, terminator
from ..memory import Buffer, DynamicSharedMemory, memory_space


@handles("memref.load")
def _memref_load(ex, op):
    buf, *indices = ex.operands(op)
    return [ex.access(op, "load", buf, indices, ())]


@handles("memref.store")
def _memref_store(ex, op):
    value, buf, *indices = ex.operands(op)
    ex.access(op, "store", buf, indices, (), value)
    return []


@handles("memref.alloc")
def _memref_alloc(ex, op):
    t = op.results[0].type
    if memory_space(t) != "workgroup":
        raise UnsupportedOp(f"memref.alloc of {t}: only workgroup memory can be allocated in a kernel")
    if len(op.operands):
        raise UnsupportedOp("memref.alloc with dynamic sizes or symbols")
    return [ex.new_shared(f"alloc@{location_of(op)}", t)]


@handles("memref.view")
def _memref_view(ex, op):
    """A view of workgroup bytes (a 1-D i8 buffer: the lowering's one allocation, whose views
    alias) or of ``gpu.dynamic_shared_memory`` (a new allocation there; views that overlap are
    refused), at a uniform byte shift, to a static shape."""
    source, shift, *sizes = ex.operands(op)
    if sizes:
        raise UnsupportedOp("memref.view with dynamic sizes")
    t = op.results[0].type
    shift = ex.uniform(np.asarray(shift), "memref.view byte shift")
    if isinstance(source, Buffer):
        return [ex.view_shared(source, shift, t)]
    if not isinstance(source, DynamicSharedMemory):
        raise UnsupportedOp("memref.view of a memref other than workgroup bytes or gpu.dynamic_shared_memory")
    address = source.base_address + shift
    key = (address, str(t))
    if key not in ex.dynamic_views:
        buf = ex.new_shared(f"dynamic+{address - source.base_address} ({t})", t, address)
        end = address + len(buf.data) * buf.elem.mem_bytes
        for other in ex.dynamic_views.values():
            if other.base_address < end and address < other.base_address + len(other.data) * other.elem.mem_bytes:
                raise UnsupportedOp(f"memref.view: {buf.name} overlaps {other.name} (aliasing views)")
        ex.dynamic_views[key] = buf
    return [ex.dynamic_views[key]]


@handles("memref.extract_aligned_pointer_as_index")
def _extract_aligned_pointer(ex, op):
    (buf,) = ex.operands(op)
    return [np.full(ex.num_threads, buf.base_address, dtype=np.uint64)]


#: `arith.AtomicRMWKind` -> (operation on the old and the new value, integer view).
_ATOMIC_KINDS = {
    int(getattr(AtomicRMWKind, name)): rule
    for name, rule in {
        "addf": (np.add, None),
        "addi": (np.add, None),
        "andi": (np.bitwise_and, "unsigned"),
        "assign": (lambda old, new: new, None),
        "maximumf": (np.maximum, None),
        "maxnumf": (np.fmax, None),
        "maxs": (np.maximum, "signed"),
        "maxu": (np.maximum, "unsigned"),
        "minimumf": (np.minimum, None),
        "minnumf": (np.fmin, None),
        "mins": (np.minimum, "signed"),
        "minu": (np.minimum, "unsigned"),
        "mulf": (np.multiply, None),
        "muli": (np.multiply, None),
        "ori": (np.bitwise_or, "unsigned"),
        "xori": (np.bitwise_xor, "unsigned"),
    }.items()
}


@handles("memref.atomic_rmw")
def _memref_atomic_rmw(ex, op):
    """One read-modify-write per active thread, in thread order, on global or workgroup memory;
    each thread gets the value it replaced. On workgroup memory the race tracking sees an atomic
    (`Machine.track_atomic`); its bank cost is not modelled (no wavefronts are recorded)."""
    value, buf, *indices = ex.operands(op)
    kind = op.attributes["kind"].value
    if kind not in _ATOMIC_KINDS:
        raise UnsupportedOp(f"memref.atomic_rmw kind {kind}")
    combine, view = _ATOMIC_KINDS[kind]
    offsets = ex.element_offsets(buf, indices, ())
    if buf.space == "workgroup":
        ex.track_atomic(op, buf, offsets[ex.active])
    elem = buf.elem
    old = np.zeros(ex.num_threads, dtype=buf.data.dtype)
    new = elem.wrap(value)
    for thread in np.flatnonzero(ex.active):
        place = int(offsets[thread])
        old[thread] = buf.data[place]
        if view is None or elem.is_float:
            result = combine(old[thread : thread + 1], new[thread : thread + 1])
        else:
            convert = elem.signed if view == "signed" else elem.unsigned
            result = combine(convert(old[thread : thread + 1]), convert(new[thread : thread + 1]))
        buf.data[place] = elem.wrap(result)[0]
    return [elem.wrap(old)]


@handles("memref.generic_atomic_rmw")
def _memref_generic_atomic_rmw(ex, op):
    """One read-modify-write per active thread, in thread order, on global memory: the region
    runs on the element for that thread alone; each thread gets the value it replaced."""
    buf, *indices = ex.operands(op)
    if buf.space != "global":
        raise UnsupportedOp("memref.generic_atomic_rmw on workgroup memory")
    offsets = ex.element_offsets(buf, indices, ())
    elem = buf.elem
    old = np.zeros(ex.num_threads, dtype=buf.data.dtype)
    for thread in np.flatnonzero(ex.active):
        place = int(offsets[thread])
        old[thread] = buf.data[place]
        alone = np.zeros_like(ex.active)
        alone[thread] = True
        (new,) = ex.run_masked(op.regions[0], alone, [old.copy()])
        buf.data[place] = elem.wrap(new)[thread]
    return [elem.wrap(old)]


terminator("memref.atomic_yield")
