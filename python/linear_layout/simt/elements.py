"""How MLIR element types are held in numpy (see the module doc of `interpreter.py`)."""

from __future__ import annotations

import dataclasses
import functools

import ml_dtypes
import mlir.ir as ir
import numpy as np

from .errors import UnsupportedOp

__all__ = ["GARBAGE_BYTE", "Elem", "elem_of", "result_elem", "vector_shape"]

GARBAGE_BYTE = 0xA5  # the byte pattern of uninitialised integer memory and poison values


@dataclasses.dataclass(frozen=True)
class Elem:
    """How one MLIR element type is held in numpy."""

    name: str
    is_float: bool
    width: int  # bits of the MLIR type
    storage: np.dtype  # numpy dtype that holds one value
    mem_bytes: int  # bytes one element occupies in memory (i1 takes a byte)

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    @property
    def is_bf16(self) -> bool:
        return self.name == "bf16"

    @property
    def bits_dtype(self) -> np.dtype:
        """Unsigned dtype of the in-memory bit pattern (bf16 -> uint16)."""
        return np.dtype(f"uint{8 * self.mem_bytes}")

    def wrap(self, x) -> np.ndarray:
        """Coerce ``x`` to this type's storage: wrap integers, round floats."""
        if self.is_float:
            out = np.asarray(x).astype(self.storage)
            return _round_to_bf16(out) if self.is_bf16 else out
        out = np.asarray(x)
        if out.dtype.kind == "f":
            raise TypeError("internal: integer wrap of a float array")
        out = out.astype(self.storage)
        if self.width != 8 * self.storage.itemsize:  # i1, i4, i24, ...: clear the spare bits
            out = out & self.storage.type(self.mask)
        return out

    def signed(self, x: np.ndarray) -> np.ndarray:
        """Two's-complement value of the stored bits, as int64."""
        v = np.asarray(x)
        if self.width == 64:
            return v.view(np.int64)
        v = v.astype(np.int64)
        sign = np.int64(1 << (self.width - 1))
        return (v ^ sign) - sign

    def unsigned(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x).astype(np.uint64)

    def to_bits(self, x: np.ndarray) -> np.ndarray:
        """The in-memory bit pattern, as ``bits_dtype``."""
        x = np.ascontiguousarray(x)
        if self.is_bf16:
            return (x.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        if self.is_float:
            return x.view(self.bits_dtype)
        return x.astype(self.bits_dtype)

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        bits = np.ascontiguousarray(bits).astype(self.bits_dtype)
        if self.is_bf16:
            return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
        if self.is_float:
            return bits.view(self.storage)
        return self.wrap(bits)

    def garbage(self, shape) -> np.ndarray:
        """The pattern used for uninitialised memory and poison values."""
        if self.is_float:
            return np.full(shape, np.nan, dtype=self.storage)
        pattern = int.from_bytes(bytes([GARBAGE_BYTE]) * 8, "little") & self.mask
        return np.full(shape, pattern, dtype=self.storage)


_INDEX = Elem("index", False, 64, np.dtype(np.uint64), 8)
_FLOATS = (
    (ir.F16Type, Elem("f16", True, 16, np.dtype(np.float16), 2)),
    (ir.BF16Type, Elem("bf16", True, 16, np.dtype(np.float32), 2)),  # bf16 values held in float32
    (ir.F32Type, Elem("f32", True, 32, np.dtype(np.float32), 4)),
    (ir.F64Type, Elem("f64", True, 64, np.dtype(np.float64), 8)),
    # fp8 in ml_dtypes' numpy types (IEEE-style rounding to nearest even where they are computed)
    (ir.Float8E4M3FNType, Elem("f8E4M3FN", True, 8, np.dtype(ml_dtypes.float8_e4m3fn), 1)),
    (ir.Float8E5M2Type, Elem("f8E5M2", True, 8, np.dtype(ml_dtypes.float8_e5m2), 1)),
)


@functools.cache
def _integer_elem(width: int) -> Elem:
    if not 1 <= width <= 64:
        raise UnsupportedOp(f"integer type i{width} is wider than 64 bits")
    container = max(8, 1 << (width - 1).bit_length())
    return Elem(f"i{width}", False, width, np.dtype(f"uint{container}"), container // 8)


def elem_of(t: ir.Type) -> Elem:
    """The :class:`Elem` of a scalar type, or of the element type of a vector/memref type."""
    if isinstance(t, (ir.VectorType, ir.MemRefType)):
        t = t.element_type
    if isinstance(t, ir.IntegerType):
        return _integer_elem(t.width)
    if isinstance(t, ir.IndexType):
        return _INDEX
    for type_class, elem in _FLOATS:
        if isinstance(t, type_class):
            return elem
    raise UnsupportedOp(
        f"element type {t} is not supported (use i1..i64, index, f16, bf16, f32, f64, f8E4M3FN, f8E5M2)"
    )


def _round_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even), keeping float32 storage."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    quiet_nan = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x00400000)
    return np.where(np.isnan(x), quiet_nan, rounded).astype(np.uint32).view(np.float32)


def vector_shape(t: ir.Type) -> tuple[int, ...]:
    """Per-thread shape of a value of type ``t``: () for scalars and 0-d vectors."""
    if isinstance(t, ir.VectorType):
        if any(t.scalable_dims):
            raise UnsupportedOp(f"scalable vector type {t} is not supported")
        return tuple(t.shape)
    return ()


def result_elem(op, i: int = 0) -> Elem:
    """The :class:`Elem` of result ``i`` of ``op``."""
    return elem_of(op.results[i].type)
