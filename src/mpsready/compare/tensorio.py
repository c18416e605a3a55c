"""Streaming reads of raw tensors from a record's safetensors files, without torch.

The safetensors format (https://github.com/huggingface/safetensors, README "Format") is an
8-byte little-endian header length ``N``, ``N`` bytes of JSON mapping each tensor name to
``{"dtype", "shape", "data_offsets": [begin, end]}`` (byte offsets into the data that
follows the header), then the data, little-endian and C-contiguous. We parse that header
with :mod:`json` and read one tensor, or one chunk of a tensor, at a time with
``readinto`` into a reused buffer, so memory stays bounded by the chunk size whatever the
size of the record. ``safetensors.safe_open(..., framework="np")`` is not used for the
reads because numpy has no bfloat16 and because it returns whole tensors; the tests check
this reader against it (and against torch for bfloat16).

bfloat16 is the upper half of a float32 (same sign and exponent bits, 7 stored mantissa
bits), so widening is a 16-bit left shift of the raw ``uint16`` into a ``uint32`` viewed as
float32, which is exact. float16 is widened with numpy's own ``float16``.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from mpsready.safeio import BadArtifact, open_regular
from mpsready.safeio import loads as safe_loads

# safetensors dtype code -> (numpy storage dtype, itemsize, torch dtype name used in records)
_DTYPES: dict[str, tuple[str, int, str]] = {
    "F64": ("<f8", 8, "float64"),
    "F32": ("<f4", 4, "float32"),
    "F16": ("<f2", 2, "float16"),
    "BF16": ("<u2", 2, "bfloat16"),
    "I64": ("<i8", 8, "int64"),
    "I32": ("<i4", 4, "int32"),
    "I16": ("<i2", 2, "int16"),
    "I8": ("i1", 1, "int8"),
    "U8": ("u1", 1, "uint8"),
    "U16": ("<u2", 2, "uint16"),
    "U32": ("<u4", 4, "uint32"),
    "U64": ("<u8", 8, "uint64"),
    "BOOL": ("?", 1, "bool"),
    "C64": ("<c8", 8, "complex64"),
}
MAX_HEADER_BYTES = 100_000_000  # the limit safetensors itself enforces on the header


class RawTensorError(ValueError):
    """A safetensors file is malformed or holds a dtype this reader cannot widen."""


@dataclass(frozen=True)
class RawTensorInfo:
    """Where one tensor lies in its file. ``offset`` is absolute in the file, in bytes."""

    name: str
    st_dtype: str  # safetensors code, e.g. "BF16"
    shape: tuple[int, ...]
    offset: int
    nbytes: int

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def dtype(self) -> str:
        """The torch dtype name (``"bfloat16"``), as records spell dtypes."""
        return _DTYPES[self.st_dtype][2] if self.st_dtype in _DTYPES else self.st_dtype.lower()

    @property
    def supported(self) -> bool:
        return self.st_dtype in _DTYPES

    @property
    def itemsize(self) -> int:
        return _DTYPES[self.st_dtype][1]


def compute_dtype(*dtypes: str) -> np.dtype:
    """The numpy dtype a pair is compared in: float64 if either side is float64 or an
    integer type wider than float32 can hold exactly, complex128 for complex, else float32
    (float16/bfloat16 widen exactly to float32)."""
    if any(d.startswith("complex") for d in dtypes):
        return np.dtype(np.complex128)
    if all(d in ("float32", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "bool") for d in dtypes):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


class RawTensorFile:
    """One ``step-NNNN.safetensors`` file opened for chunked reads. Use as a context manager.

    Raises :class:`RawTensorError` on a malformed header (bad length, bad JSON, offsets
    outside the file or not matching shape x itemsize).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        try:  # a directory or a named pipe in place of the file is refused, never read (a FIFO would block)
            self._fh: io.BufferedReader = open_regular(self.path)
        except BadArtifact as exc:
            raise RawTensorError(str(exc)) from None
        except OSError as exc:
            raise RawTensorError(f"{self.path}: cannot open: {exc.strerror or exc}") from None
        try:
            self.tensors = self._read_header()
        except Exception:
            self._fh.close()
            raise

    def _read_header(self) -> dict[str, RawTensorInfo]:
        size = os.fstat(self._fh.fileno()).st_size
        head = self._fh.read(8)
        if len(head) != 8:
            raise RawTensorError(f"{self.path}: not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER_BYTES or 8 + n > size:
            raise RawTensorError(f"{self.path}: not a safetensors file (header length {n} is invalid)")
        try:
            header = safe_loads(self._fh.read(n).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # RecursionError: nested too deeply;
            # ValueError: bad JSON, or a number out of range (BadArtifact)
            raise RawTensorError(f"{self.path}: unreadable safetensors header: {exc}") from None
        if not isinstance(header, dict):
            raise RawTensorError(f"{self.path}: safetensors header is not a JSON object")
        base = 8 + n
        out: dict[str, RawTensorInfo] = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            try:
                code = str(meta["dtype"])
                shape = tuple(int(s) for s in meta["shape"])
                begin, end = (int(x) for x in meta["data_offsets"])
            except (KeyError, TypeError, ValueError, OverflowError):
                raise RawTensorError(f"{self.path}: malformed header entry for {name!r}") from None
            if any(d < 0 for d in shape):
                raise RawTensorError(f"{self.path}: tensor {name!r} has a negative dimension")
            info = RawTensorInfo(name, code, shape, base + begin, end - begin)
            if begin < 0 or end < begin or base + end > size:
                raise RawTensorError(f"{self.path}: tensor {name!r} lies outside the file")
            if info.supported and info.nbytes != info.numel * info.itemsize:
                raise RawTensorError(f"{self.path}: tensor {name!r}: {info.nbytes} bytes for shape {shape} {code}")
            out[name] = info
        return out

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "RawTensorFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_into(self, info: RawTensorInfo, start: int, count: int, buf: np.ndarray) -> np.ndarray:
        """Read elements ``[start, start+count)`` of ``info`` as raw storage into ``buf``
        (a uint8 array of at least ``count * itemsize`` bytes); returns the typed view."""
        item = info.itemsize
        nbytes = count * item
        self._fh.seek(info.offset + start * item)
        view = buf.data[:nbytes]  # the array's own buffer (uint8, contiguous)
        got = self._fh.readinto(view)
        if got != nbytes:
            raise RawTensorError(f"{self.path}: tensor {info.name!r} is truncated")
        return buf[:nbytes].view(_DTYPES[info.st_dtype][0])

    def map_chunk(self, info: RawTensorInfo, start: int, count: int) -> np.ndarray | None:
        """Elements ``[start, start+count)`` of ``info`` as a read-only typed view of a memory
        map of just that window of the file (no copy), or ``None`` where the file cannot be
        mapped. The mapping is released when the returned array is."""
        item = info.itemsize
        off = info.offset + start * item
        base = off - off % mmap.ALLOCATIONGRANULARITY
        length = off - base + count * item
        if count == 0:
            return None
        try:
            m = mmap.mmap(self._fh.fileno(), length, offset=base, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        return np.frombuffer(m, dtype=_DTYPES[info.st_dtype][0], count=count, offset=off - base)

    def read(self, name: str, dtype: np.dtype | None = None) -> np.ndarray:
        """The whole tensor ``name``, widened to ``dtype`` (default: its compute dtype), flat."""
        info = self.tensors[name]
        target = dtype or compute_dtype(info.dtype)
        buf = np.empty(info.nbytes, dtype=np.uint8)
        return widen(self.read_into(info, 0, info.numel, buf), info.st_dtype, target)


def widen(raw: np.ndarray, st_dtype: str, target: np.dtype, out: np.ndarray | None = None) -> np.ndarray:
    """Convert raw storage of safetensors dtype ``st_dtype`` to ``target`` (exact for floats
    into a wider float). Returns ``raw`` itself when no conversion is needed."""
    if st_dtype == "BF16":
        wide = raw.astype(np.uint32)
        np.left_shift(wide, 16, out=wide)
        f32 = wide.view(np.float32)
        return f32 if target == np.float32 else f32.astype(target)
    if raw.dtype == target:
        return raw
    if out is not None and out.shape == raw.shape and out.dtype == target:
        out[...] = raw
        return out
    return raw.astype(target)


def iter_chunks(fa: RawTensorFile, ia: RawTensorInfo, fb: RawTensorFile, ib: RawTensorInfo,
                target: np.dtype, chunk: int, prefetch: bool = False,
                mapped: bool = True) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Aligned chunks of two same-sized tensors as ``target`` arrays.

    With ``mapped`` (default) each chunk is a memory map of its window of the file, read
    in place without a copy (about 1.5x less CPU than ``readinto`` on the build machine);
    only one window per side is mapped at a time, so resident memory stays at two chunks.
    Without it, or where mapping fails, chunks are read with ``readinto`` into reused buffers.

    With ``prefetch`` a background thread reads the next pair of chunks while the caller
    computes on the current one (``readinto`` releases the GIL, so reading and numpy's
    arithmetic can overlap on two free cores; on the shared 2-core build machine it made
    no measurable difference, so it is off by default). Two buffers per side, so memory stays at
    ``4 * chunk * itemsize`` bytes. Each yielded pair is valid only until the next one
    is requested.
    """
    n = ia.numel
    if n == 0:
        return
    size = min(n, chunk)
    nbuf = 2 if prefetch and n > chunk else 1
    bufs: list[tuple[np.ndarray, np.ndarray] | None] = [None] * nbuf  # allocated on first unmapped read
    starts = list(range(0, n, chunk))

    def read(i: int) -> tuple[np.ndarray, np.ndarray]:
        start = starts[i]
        count = min(chunk, n - start)
        if mapped:
            ma, mb = fa.map_chunk(ia, start, count), fb.map_chunk(ib, start, count)
            if ma is not None and mb is not None:
                return ma, mb
        if bufs[i % nbuf] is None:
            bufs[i % nbuf] = (np.empty(size * ia.itemsize, dtype=np.uint8),
                              np.empty(size * ib.itemsize, dtype=np.uint8))
        ba, bb = bufs[i % nbuf]  # type: ignore[misc]
        return fa.read_into(ia, start, count, ba), fb.read_into(ib, start, count, bb)

    if nbuf == 1:
        for i in range(len(starts)):
            ra, rb = read(i)
            yield widen(ra, ia.st_dtype, target), widen(rb, ib.st_dtype, target)
            del ra, rb  # unmap this window before mapping the next
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mpsready-read") as pool:
        pending = pool.submit(read, 0)
        for i in range(len(starts)):
            ra, rb = pending.result()
            if i + 1 < len(starts):
                pending = pool.submit(read, i + 1)  # fills the other buffer while this one is used
            yield widen(ra, ia.st_dtype, target), widen(rb, ib.st_dtype, target)
