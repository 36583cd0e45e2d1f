"""Python side of the lane-batched bootstrap kernel (_bootstrap_lanes.c): four draws per SIMD vector, the algorithm
and random streams of estimate/bootstrap_kernel.py, 2.4x (paper-sized panel) to 3x (10^6 rows) its speed per thread
(benchmarks/results/bootstrap.md).

The C file is compiled at install time (setup.py, an optional extension). It is called through ctypes, which
releases the GIL, so estimate/bootstrap.py runs blocks of draws in threads. Where it was not compiled, or the
compiled file is older than its source's ABI_VERSION, `UNAVAILABLE` says why and the bootstrap runs on the numba
kernel alone (same draws, slower).
"""

from __future__ import annotations

import ctypes

import numpy as np

ABI_VERSION = 2
"""lapbias_lanes_abi_version() of a compiled file that matches this module (a stale build is not used)."""

MAX_COUNT = 255
"""A draw in which a row (or entity) is picked more often than this is left to the numba kernel: the C kernel keeps
weights in one byte. A count of 256 has probability ~1e-500 for a multinomial(n, 1/n) pick; tests lower the bound."""
_POINTER, _INT = ctypes.c_void_p, ctypes.c_int64


def _load() -> tuple[ctypes.CDLL | None, str]:
    try:
        from . import _bootstrap_lanes
    except ImportError as err:
        return None, f"the compiled bootstrap kernel is not built ({err}); reinstall lapbias with a C compiler"
    library = ctypes.CDLL(_bootstrap_lanes.__file__)
    library.lapbias_lanes_abi_version.restype = _INT
    if library.lapbias_lanes_abi_version() != ABI_VERSION:
        return None, f"the compiled bootstrap kernel {_bootstrap_lanes.__file__} is stale (ABI " \
                     f"{library.lapbias_lanes_abi_version()}, {ABI_VERSION} expected); reinstall lapbias"
    library.lapbias_lanes_cross_products.restype = _INT
    library.lapbias_lanes_cross_products.argtypes = [_INT, _INT, _INT, _POINTER, _POINTER, _POINTER, _POINTER, _INT,
                                                     ctypes.c_uint64, _INT, _INT, _POINTER, _INT, _INT, _POINTER,
                                                     _POINTER, _POINTER]
    return library, ""


_LIBRARY, UNAVAILABLE = _load()


def _pointer(array: np.ndarray, dtype) -> int:
    if array.dtype != dtype or not array.flags.c_contiguous:
        raise TypeError(f"the lanes kernel needs a C-contiguous {np.dtype(dtype)} array, got {array.dtype}")
    return array.ctypes.data


def cross_products(z: np.ndarray, d: np.ndarray, start: np.ndarray, n_d: int, unit: np.ndarray, n_units: int,
                   seed: int, first_draw: int, n_draws: int, inverse: np.ndarray, max_iter: int,
                   max_count: int = MAX_COUNT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M, raw, steps) of draws first_draw .. first_draw + n_draws − 1, as bootstrap_kernel.bootstrap_cross_products
    returns them, except steps = −1 for a draw this kernel leaves to that one (a singleton level, a count above
    max_count, CG not converged in max_iter steps). z: (n, 4) float64 sorted by the FE "a"; d: (n,) int32; start, unit:
    int64; inverse: the (n_d, n_d) float64 preconditioner."""
    if _LIBRARY is None:
        raise RuntimeError(UNAVAILABLE)
    M, raw, steps = np.zeros((n_draws, 4, 4)), np.zeros((n_draws, 4)), np.zeros(n_draws, np.int64)
    status = _LIBRARY.lapbias_lanes_cross_products(
        z.shape[0], start.size - 1, n_d, _pointer(z, np.float64), _pointer(d, np.int32), _pointer(start, np.int64),
        _pointer(unit, np.int64), n_units, seed, first_draw, n_draws, _pointer(inverse, np.float64), max_iter,
        max_count, M.ctypes.data, raw.ctypes.data, steps.ctypes.data)
    if status == -2:
        raise ValueError(f"max_count = {max_count}; the kernel's weights are bytes: 1 .. {MAX_COUNT}")
    if status != 0:
        raise MemoryError(f"the bootstrap kernel could not allocate its work arrays ({z.shape[0]:,} rows)")
    return M, raw, steps
