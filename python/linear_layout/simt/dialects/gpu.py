"""The `gpu` ops: thread and block indices, barriers, shuffles, dynamic shared memory.

Ops: thread_id block_id block_dim grid_dim lane_id barrier shuffle (xor/up/down/idx, returning
the value and the valid flag) dynamic_shared_memory return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.upstream import gpu_dimension, gpu_shuffle_mode
from ..elements import elem_of, result_elem, vector_shape
from ..errors import UndefinedBehaviorError
from ..machine import Machine, handles, register, terminator
from ..memory import SHARED_BASE_ALIGNMENT, DynamicSharedMemory


def _dimension(op) -> int:
    return gpu_dimension(op.attributes["dimension"])


def _index_op(values: Callable[[Machine, int], Any]):
    def handler(ex, op):
        return [np.broadcast_to(np.asarray(values(ex, _dimension(op)), dtype=np.uint64), (ex.num_threads,))]

    return handler


@handles("gpu.lane_id")
def _lane_id(ex, op):
    return [ex.lane_of_thread.astype(np.uint64)]


@handles("gpu.barrier")
def _barrier(ex, op):
    ex.require_all_active("gpu.barrier")
    for buf in ex.shared:
        buf.start_interval()
    ex.interval += 1
    ex.report.barriers += 1
    return []


@handles("gpu.shuffle")
def _shuffle(ex, op):
    value, offset, width = ex.operands(op)
    mode = gpu_shuffle_mode(op.attributes["mode"])
    width = ex.uniform(width, "gpu.shuffle width")
    if not 1 <= width <= ex.launch.threads_per_warp:
        raise UndefinedBehaviorError(f"gpu.shuffle width {width} outside [1, {ex.launch.threads_per_warp}]")
    lane = ex.lane_of_thread.astype(np.int64)
    # "the first `width` lanes of the subgroup must be active" -- in every warp that runs it.
    warp_active = np.zeros(ex.launch.num_warps, bool)
    np.logical_or.at(warp_active, ex.warp_of_thread, ex.active)
    needed = warp_active[ex.warp_of_thread] & (lane < width)
    if (needed & ~ex.active).any():
        raise UndefinedBehaviorError(
            "gpu.shuffle in divergent control flow: the first `width` lanes of a warp must be active"
        )
    offset = elem_of(op.operands[1].type).signed(offset)
    source = {"xor": lane ^ offset, "up": lane - offset, "down": lane + offset, "idx": offset}[mode]
    valid = (lane < width) & (source >= 0) & (source < width)
    source_thread = ex.warp_of_thread * ex.launch.threads_per_warp + np.where(valid, source, lane)
    result = value[source_thread]
    valid_shape = valid.reshape(valid.shape + (1,) * (result.ndim - 1))
    result = np.where(valid_shape, result, result_elem(op).garbage(result.shape))
    # NVVM moves 32 bits per shfl.sync; wider values take several.
    value_type = op.operands[0].type
    bits = elem_of(value_type).width * int(np.prod(vector_shape(value_type), dtype=np.int64))
    ex.report.shuffles += int(warp_active.sum()) * -(-bits // 32)
    return [result, valid.astype(np.uint8)]


@handles("gpu.dynamic_shared_memory")
def _dynamic_shared_memory(ex, op):
    if ex.dynamic_base is None:
        ex.dynamic_base = -(-ex.shared_top // SHARED_BASE_ALIGNMENT) * SHARED_BASE_ALIGNMENT
    return [DynamicSharedMemory(ex.dynamic_base)]


register("gpu.thread_id", _index_op(lambda ex, d: ex.tid if d == 0 else 0))
register("gpu.block_dim", _index_op(lambda ex, d: ex.num_threads if d == 0 else 1))
register("gpu.block_id", _index_op(lambda ex, d: ex.block_id[d]))
register("gpu.grid_dim", _index_op(lambda ex, d: ex.launch.grid[d]))
terminator("gpu.return")
