"""Triton's own CPU interpreter as the oracle for whole kernels, without torch.

`run_triton_interpreter(name, launch, constexprs)` runs corpus kernel `name` in Triton 3.9's
interpreter (`TRITON_INTERPRET=1`) on the launch's numpy arrays and returns the arrays it leaves
in every pointer argument. The interpreter is chosen when `triton` is imported (the environment
variable is read at import and `@triton.jit` decides at decoration time), so the runs happen in
one worker process started with the variable in its environment (`python oracle.py --serve`,
answering pickled requests on its stdin/stdout); this module imports `triton` only inside the
functions the worker (and a test of the correction below) calls.

Triton's interpreter takes any tensor-like object with `data_ptr()`, `dtype` (whose `str()` is
`torch.float32`, ...), `untyped_storage()`, `new_empty()`, `set_()`, `storage_offset()`,
`size()`, `stride()` and `copy_()`: `NumpyTensor` is that object over a numpy array, sharing its
memory, so the kernel writes straight into the array. A bf16 array is an `ml_dtypes.bfloat16`
numpy array (`torch.bfloat16`).

One correction of Triton 3.9's interpreter is applied in the worker, and only this one
(`exact_bf16_dot`): the interpreter holds bf16 values as their uint16 bit patterns
(`_get_np_dtype(tl.bfloat16)` is `uint16`, whatever the argument's storage), and its
`create_dot` multiplies those integers (`np.matmul(a.data, b.data, dtype=float32)`), so a bf16
`tl.dot` returns products of bit patterns (about 1e10 on small integers). The corrected dot
widens each bf16 operand to the float32 of the same value (its bits shifted up 16, exact) and
then runs the interpreter's own dot, as for f16; every other dot is passed on untouched.
Loads, stores, `where` and the bf16 <-> f32 casts of exactly representable values are right as
they are (they move bits, or convert with `_convert_float`). Not corrected, so no corpus kernel
does it: arithmetic in bf16 itself (`a + b`, `a * b`, `tl.maximum` on two bf16 tensors works on
the bit patterns too), and f32 -> bf16 casts of values bf16 cannot hold (the interpreter
truncates where a GPU rounds to nearest even).
"""

from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

__all__ = ["NumpyTensor", "TorchDtype", "exact_bf16_dot", "run_in_worker", "run_triton_interpreter"]


class TorchDtype:
    """A stand-in for a torch dtype: Triton reads `str(dtype)` (`torch.float32`). One object per
    dtype, because Triton's specializer caches by the dtype object's identity."""

    _BY_NUMPY: dict[str, TorchDtype] = {}

    def __init__(self, torch_name: str) -> None:
        self.torch_name = torch_name

    def __str__(self) -> str:
        return f"torch.{self.torch_name}"

    __repr__ = __str__

    @classmethod
    def of(cls, dtype: np.dtype) -> TorchDtype:
        names = {"float32": "float32", "float16": "float16", "float64": "float64", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "uint32": "uint32", "bool": "bool",
                 "bfloat16": "bfloat16"}
        name = names[np.dtype(dtype).name]
        return cls._BY_NUMPY.setdefault(name, cls(name))


class _Storage:
    """The untyped storage of a NumpyTensor: its base array (already on the "cpu")."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def cpu(self) -> _Storage:
        return self

    def copy_(self, other: _Storage) -> None:
        if other.array is not self.array:
            self.array[...] = other.array


class NumpyTensor:
    """A torch-like view of a contiguous numpy array that shares its memory."""

    def __init__(self, array: np.ndarray) -> None:
        if not array.flags.c_contiguous:
            raise ValueError("NumpyTensor needs a C-contiguous array")
        self.array = array
        self.dtype = TorchDtype.of(array.dtype)

    def data_ptr(self) -> int:
        return self.array.ctypes.data

    def untyped_storage(self) -> _Storage:
        return _Storage(self.array)

    def new_empty(self, *shape, device=None) -> NumpyTensor:
        return NumpyTensor(np.empty(shape, self.array.dtype))

    def set_(self, storage: _Storage, offset: int, size, stride) -> NumpyTensor:
        self.array = storage.array
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple[int, ...]:
        return self.array.shape

    def stride(self) -> tuple[int, ...]:
        return tuple(step // self.array.itemsize for step in self.array.strides)

    def copy_(self, other: NumpyTensor) -> NumpyTensor:
        if other.array is not self.array:
            self.array[...] = other.array
        return self

    def cpu(self) -> NumpyTensor:
        return self

    @property
    def device(self) -> str:
        return "cpu"

    def numel(self) -> int:
        return self.array.size

    def element_size(self) -> int:
        return self.array.itemsize


def exact_bf16_dot(create_dot: Callable) -> Callable:
    """Triton's interpreter `create_dot`, corrected for bf16 operands: each bf16 operand (held as
    its uint16 bits) becomes the float32 of the same value, `bits << 16`, before `create_dot`
    runs; a dot of any other operand types is `create_dot`'s own, untouched.

    Requires: `create_dot(builder, a, b, acc, input_precision, max_num_imprecise_acc)` with
    TensorHandle operands, as `triton.runtime.interpreter.InterpreterBuilder.create_dot`.
    Postcondition: on bf16 operands, the f32 dot of their values (products exact in f32, summed
    as the interpreter sums f16 products); otherwise `create_dot(...)` itself.
    Example: a 1 x 1 bf16 dot of 3 (bits 0x4040) by 2 (0x4000) is 6.0, where Triton's own gives
    16448 * 16384 = 269484032.0.
    """
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    def widened(operand):
        if operand.dtype.scalar != tl.bfloat16:
            return operand
        return TensorHandle((operand.data.astype(np.uint32) << np.uint32(16)).view(np.float32), tl.float32)

    def corrected(builder, a, b, acc, input_precision, max_num_imprecise_acc):
        return create_dot(builder, widened(a), widened(b), acc, input_precision, max_num_imprecise_acc)

    corrected.corrects = create_dot  # type: ignore[attr-defined]
    return corrected


def _correct_the_interpreter() -> None:
    """Install `exact_bf16_dot` on Triton's interpreter builder (once, in the worker)."""
    from triton.runtime.interpreter import InterpreterBuilder

    if not hasattr(InterpreterBuilder.create_dot, "corrects"):
        InterpreterBuilder.create_dot = exact_bf16_dot(InterpreterBuilder.create_dot)


def run_in_worker(name: str, args: tuple, grid: tuple[int, ...], constexprs: dict) -> dict[int, np.ndarray]:
    """In the worker: run corpus kernel `name` on copies of `args`; the arrays after the run,
    keyed by argument position."""
    from corpus import case  # imported here, in the interpreting worker, after TRITON_INTERPRET=1

    arrays = {index: np.ascontiguousarray(arg).copy() for index, arg in enumerate(args) if isinstance(arg, np.ndarray)}
    call_args = [NumpyTensor(arrays[index]) if index in arrays else arg for index, arg in enumerate(args)]
    case(name).fn[grid](*call_args, **constexprs)
    return arrays


def _send(stream, value) -> None:
    data = pickle.dumps(value)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the oracle worker closed its pipe")
    return pickle.loads(stream.read(struct.unpack("<Q", header)[0]))


class _Worker:
    """The one interpreting worker process (`python oracle.py --serve`, started on first use with
    `TRITON_INTERPRET=1` in its environment), answering requests over its stdin/stdout."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None

    def call(self, request: tuple):
        if self.process is None or self.process.poll() is not None:
            environment = {**os.environ, "TRITON_INTERPRET": "1"}
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--serve"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment,
            )
            atexit.register(self.process.kill)
        _send(self.process.stdin, request)
        ok, value = _receive(self.process.stdout)
        if not ok:
            raise RuntimeError(f"Triton's interpreter failed: {value}")
        return value


_WORKER = _Worker()


def run_triton_interpreter(name: str, args: tuple, grid: tuple[int, ...], constexprs: dict) -> dict[int, np.ndarray]:
    """The arrays (by argument position) that Triton's interpreter leaves after running corpus
    kernel `name` over `grid` on copies of `args`; the inputs themselves are not changed."""
    return _WORKER.call((name, args, grid, constexprs))


def _serve() -> None:
    """The worker's loop: the protocol owns the real stdout; anything printed goes to stderr."""
    _correct_the_interpreter()
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while True:
        try:
            request = _receive(requests)
        except EOFError:
            return
        try:
            _send(replies, (True, run_in_worker(*request)))
        except Exception as error:  # reported to the caller, which raises it
            _send(replies, (False, f"{type(error).__name__}: {error}"))


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") != "1" or sys.argv[1:] != ["--serve"]:
        sys.exit("usage: TRITON_INTERPRET=1 python oracle.py --serve (started by run_triton_interpreter)")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    _serve()
