"""Python side of the lane-batched bootstrap kernel (_bootstrap_lanes.c): four draws per SIMD vector, the algorithm
and random streams of estimate/bootstrap_kernel.py, 2.4x (paper-sized panel) to 3x (10^6 rows) its speed per thread
(benchmarks/results/bootstrap.md).

The C file is compiled at install time (setup.py, an optional extension). It is called through ctypes, which
releases the GIL, so estimate/bootstrap.py runs blocks of draws in threads. Where it was not compiled, cannot be
loaded, or was compiled from another version of its source (its sha256, compiled in, differs from the source file
beside it), `UNAVAILABLE` says why and the bootstrap runs on the numba kernel alone (the same draws to rounding,
slower); `lapbias estimate` says so.
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

import numpy as np

MAX_COUNT = 255
"""A draw in which a row (or entity) is picked more often than this is left to the numba kernel: the C kernel keeps
weights in one byte. A count of 256 has probability ~1e-500 per row for a multinomial(n, 1/n) pick; tests lower it."""
SOURCE = Path(__file__).with_name("_bootstrap_lanes.c")
_POINTER, _INT = ctypes.c_void_p, ctypes.c_int64
ARGTYPES = [_INT, _INT, _INT, _POINTER, _POINTER, _POINTER, _POINTER, _INT, ctypes.c_uint64, _INT, _INT, _POINTER, _INT,
            _INT, _POINTER, _POINTER, _POINTER]
"""lapbias_lanes_cross_products(n, n_a, n_d, z, d, start, unit, n_units, seed, first_draw, n_draws, inverse, max_iter,
max_count, M, raw, steps)."""


def _load() -> tuple[ctypes.CDLL | None, str]:
    try:
        from . import _bootstrap_lanes

        library = ctypes.CDLL(_bootstrap_lanes.__file__)
        library.lapbias_lanes_source_sha256.restype = ctypes.c_char_p
        compiled_from = library.lapbias_lanes_source_sha256().decode()
        function = library.lapbias_lanes_cross_products
    except (ImportError, OSError, AttributeError) as err:
        return None, f"the compiled bootstrap kernel is not available ({err}); reinstall lapbias with a C compiler"
    if SOURCE.is_file() and compiled_from != hashlib.sha256(SOURCE.read_bytes()).hexdigest():
        return None, f"the compiled bootstrap kernel {Path(_bootstrap_lanes.__file__).name} was built from another " \
                     f"version of {SOURCE.name} (its rebuild failed?); reinstall lapbias (`pip install -e .`)"
    function.restype, function.argtypes = _INT, ARGTYPES
    return library, ""


_LIBRARY, UNAVAILABLE = _load()


def _pointer(array: np.ndarray, dtype, shape: tuple, name: str) -> int:
    """The address of `array` after checking what the C kernel assumes of it (it reads out of bounds otherwise)."""
    if array.dtype != dtype or array.shape != shape or not array.flags.c_contiguous:
        raise TypeError(f"the lanes kernel needs {name} as a C-contiguous {np.dtype(dtype)} array of shape {shape}, "
                        f"got {array.dtype} {array.shape}{'' if array.flags.c_contiguous else ' (not contiguous)'}")
    return array.ctypes.data


def cross_products(z: np.ndarray, d: np.ndarray, start: np.ndarray, n_d: int, unit: np.ndarray, n_units: int,
                   seed: int, first_draw: int, n_draws: int, inverse: np.ndarray, max_iter: int,
                   max_count: int = MAX_COUNT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M, raw, steps) of draws first_draw .. first_draw + n_draws − 1, as bootstrap_kernel.bootstrap_cross_products
    returns them, except steps = −1 for a draw this kernel leaves to that one (a count above max_count, CG not
    converged in max_iter steps). z: (n, 4) float64, rows sorted by the FE "a"; d: (n,) int32 levels in 0 .. n_d − 1;
    start: (n_a + 1,) int64 row offsets of the a-levels; unit: (n,) int64 in 0 .. n_units − 1; inverse: the (n_d, n_d)
    float64 preconditioner."""
    if _LIBRARY is None:
        raise RuntimeError(UNAVAILABLE)
    n = z.shape[0]
    pointers = [_pointer(z, np.float64, (n, 4), "z"), _pointer(d, np.int32, (n,), "d"),
                _pointer(start, np.int64, (start.size,), "start"), _pointer(unit, np.int64, (n,), "unit"),
                _pointer(inverse, np.float64, (n_d, n_d), "inverse")]
    if n and not (0 <= d.min() and d.max() < n_d and 0 <= unit.min() and unit.max() < n_units):
        raise ValueError(f"the lanes kernel needs d in 0 .. {n_d - 1} and unit in 0 .. {n_units - 1}")
    if start.size < 2 or start[0] != 0 or start[-1] != n or np.any(np.diff(start) < 0):
        raise ValueError("the lanes kernel needs start to be nondecreasing row offsets from 0 to the number of rows")
    M, raw, steps = np.zeros((n_draws, 4, 4)), np.zeros((n_draws, 4)), np.zeros(n_draws, np.int64)
    status = _LIBRARY.lapbias_lanes_cross_products(
        n, start.size - 1, n_d, pointers[0], pointers[1], pointers[2], pointers[3], n_units, seed, first_draw, n_draws,
        pointers[4], max_iter, max_count, M.ctypes.data, raw.ctypes.data, steps.ctypes.data)
    if status == -2:
        raise ValueError(f"max_count = {max_count}; the kernel's weights are bytes: 1 .. {MAX_COUNT}")
    if status != 0:
        raise MemoryError(f"the bootstrap kernel could not allocate its work arrays ({n:,} rows)")
    return M, raw, steps
