"""Block-out cross-validation (ESS paper §3.2, App. C "Learning-curve design and block-out CV").

For a training size n: after ONE seeded permutation of the N analysis rows (the same permutation for every n
of the grid), K = ⌊N/n⌋ disjoint blocks B_k = rows k·n, …, (k+1)·n − 1 of the permuted order; the last
N − K·n rows are discarded (paper fn. 6). The algorithm is trained on block k alone (size n) and evaluated on
its complement T_k (size m = (K − 1)·n):

    R̂_k = (1/m) Σ_{i ∉ B_k} ℓ(f̂_k(X_i), Y_i),        R̂(n) = (1/K) Σ_k R̂_k          (eq. 3.2)

Each used row i is a test point of the K − 1 blocks that do not contain it; its block-averaged test loss is

    L̃_i = (1/(K − 1)) Σ_{k : i ∉ B_k} ℓ(f̂_k(X_i), Y_i)                              (§4.2.1, App. B)

and (1/(Kn)) Σ_i L̃_i = R̂(n) exactly (each R̂_k has the same m). (R̂_k)_k and (L̃_i)_i are all the variance
estimators need (variance.py), so the K × N loss matrix is never held in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class BlockStats:
    """Block-out CV summaries for one n: R̂_k per block and L̃_i per used row (row j is in block j // n)."""

    n: int
    block_risk: np.ndarray
    obs_loss: np.ndarray

    @property
    def K(self) -> int:
        return len(self.block_risk)

    @property
    def N(self) -> int:
        """Rows used (K·n)."""
        return len(self.obs_loss)

    @property
    def risk(self) -> float:
        """R̂(n), eq. (3.2)."""
        return float(self.block_risk.mean())

    def __sub__(self, other: "BlockStats") -> "BlockStats":
        """The summaries of the loss difference ℓ_ML − ℓ_LLM (eq. 4.6): both are linear in the loss."""
        return BlockStats(self.n, self.block_risk - other.block_risk, self.obs_loss - other.obs_loss)


def permutation(n_rows: int, seed: int) -> np.ndarray:
    """The one seeded permutation of the analysis sample (App. C)."""
    return np.random.default_rng(seed).permutation(n_rows)


def blocks(order: np.ndarray, n: int) -> list[np.ndarray]:
    """The K = ⌊N/n⌋ blocks of the permuted order (row indices), the remainder discarded."""
    K = len(order) // n
    return [order[k * n:(k + 1) * n] for k in range(K)]


def block_out_cv(order: np.ndarray, n: int, fit_predict: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 components: Callable[[np.ndarray, np.ndarray], np.ndarray], progress=None) -> list[BlockStats]:
    """Eq. (3.2) for training size n, per loss component.

    fit_predict(train_rows, eval_rows) trains on the rows `train_rows` and returns predictions for `eval_rows`;
    components(eval_rows, predictions) returns the (C, len) loss components. Rows are indices of the analysis
    sample; the summaries are in the permuted (block) order. Running sums keep memory at O(C·K·n).
    """
    parts = blocks(order, n)
    K = len(parts)
    used = order[:K * n]
    held_out_sum = None
    block_risk = []
    for k, train in enumerate(parts):
        comp = np.atleast_2d(np.asarray(components(used, fit_predict(train, used)), dtype=float))
        comp[:, k * n:(k + 1) * n] = 0.0                       # the training block is not a test set
        held_out_sum = comp if held_out_sum is None else held_out_sum + comp
        block_risk.append(comp.sum(axis=1) / ((K - 1) * n))    # R̂_k, m = (K − 1)·n
        if progress is not None:
            progress(k)
    block_risk = np.array(block_risk)                          # (K, C)
    obs_loss = held_out_sum / (K - 1)                          # L̃_i
    return [BlockStats(n, block_risk[:, c], obs_loss[c]) for c in range(obs_loss.shape[0])]


def fixed_predictor_cv(order: np.ndarray, n: int, components: np.ndarray) -> list[BlockStats]:
    """Eq. (3.2) for a FIXED prediction rule (the LLM, fn. 11): the same block structure with losses that do
    not depend on the training block, so L̃_i = ℓ_i and R̂_k = mean of ℓ over the complement of B_k; R̂(n) is
    the mean loss over the K·n used rows."""
    K = len(order) // n
    comp = np.atleast_2d(np.asarray(components, dtype=float))[:, order[:K * n]]
    own = comp.reshape(comp.shape[0], K, n).sum(axis=2)        # (C, K)
    block_risk = (comp.sum(axis=1)[:, None] - own) / ((K - 1) * n)
    return [BlockStats(n, block_risk[c], comp[c]) for c in range(comp.shape[0])]
