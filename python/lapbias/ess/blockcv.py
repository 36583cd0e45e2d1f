"""Block-out cross-validation (ESS paper §3.2, App. C "Learning-curve design and block-out CV").

For a training size n: after ONE seeded permutation of the N analysis rows (the same permutation for every n
of the grid), K = ⌊N/n⌋ disjoint blocks B_k = rows k·n, …, (k+1)·n − 1 of the permuted order; the last
N − K·n rows are discarded (paper fn. 6). The algorithm is trained on block k alone (size n) and evaluated on
its complement T_k (size m = (K − 1)·n):

    R̂_k = (1/m) Σ_{i ∉ B_k} ℓ(f̂_k(X_i), Y_i),        R̂(n) = (1/K) Σ_k R̂_k          (eq. 3.2)

Each used row i is a test point of the K − 1 blocks that do not contain it; its block-averaged test loss is

    L̃_i = (1/(K − 1)) Σ_{k : i ∉ B_k} ℓ(f̂_k(X_i), Y_i)                              (§4.2.1, App. B)

and (1/(Kn)) Σ_i L̃_i = R̂(n) exactly (each R̂_k has the same m). The variance estimators (variance.py) need
(R̂_k)_k, (L̃_i)_i and, for the finite-K estimator, the within-block spread W_k = Σ_{i ∉ B_k} (ℓ_ki − R̂_k)²;
so the K × N loss matrix is never held in memory.

A loss is handled as observation-level *components* (losses.py: one for a mean loss, two for 1 − F1), and the
LLM's fixed predictions can ride along as further components: `Components` keeps, per component, the R̂_k and
L̃_i, and per block the centred cross-products of the components over T_k, so that any linear combination of
them, e.g. the loss difference ℓ_ML − ℓ_LLM of eq. (4.6), gets its exact summaries (`Components.linear`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class BlockStats:
    """Block-out CV summaries of one loss at one n: R̂_k per block, L̃_i per used row (row j is in block j // n)
    and W_k = Σ_{i ∉ B_k} (ℓ_ki − R̂_k)² per block (NaN where unknown)."""

    n: int
    block_risk: np.ndarray
    obs_loss: np.ndarray
    within: np.ndarray

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


@dataclass(frozen=True)
class Components:
    """Block-out CV summaries of C loss components at one n: block_risk (C, K), obs_loss (C, N) and cross (K, C, C),
    cross[k] = Σ_{i ∉ B_k} (c_ki − c̄_k)(c_ki − c̄_k)ᵀ, the centred cross-products over block k's test set."""

    n: int
    block_risk: np.ndarray
    obs_loss: np.ndarray
    cross: np.ndarray

    def means(self) -> np.ndarray:
        """The block-out CV mean of each component (eq. 3.2 applied to it)."""
        return self.block_risk.mean(axis=1)

    def linear(self, weights, constant: float = 0.0) -> BlockStats:
        """The summaries of the loss constant + Σ_c weights_c · component_c (exact: all three are linear in the
        entries, W_k quadratic through the cross-products)."""
        w = np.asarray(weights, dtype=float)
        return BlockStats(self.n, constant + w @ self.block_risk, constant + w @ self.obs_loss,
                          np.einsum("c,kcd,d->k", w, self.cross, w))


def permutation(n_rows: int, seed: int) -> np.ndarray:
    """The one seeded permutation of the analysis sample (App. C)."""
    return np.random.default_rng(seed).permutation(n_rows)


def blocks(order: np.ndarray, n: int) -> list[np.ndarray]:
    """The K = ⌊N/n⌋ blocks of the permuted order (row indices), the remainder discarded."""
    K = len(order) // n
    return [order[k * n:(k + 1) * n] for k in range(K)]


def block_out_cv(order: np.ndarray, n: int, fit_predict: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 components: Callable[[np.ndarray, np.ndarray], np.ndarray], progress=None) -> Components:
    """Eq. (3.2) for training size n, per loss component.

    fit_predict(train_rows, eval_rows) trains on the rows `train_rows` and returns predictions for `eval_rows`;
    components(eval_rows, predictions) returns the (C, len) loss components. Rows are indices of the analysis
    sample; the summaries are in the permuted (block) order. Running sums keep memory at O(C·K·n).
    """
    parts = blocks(order, n)
    K = len(parts)
    used = order[:K * n]
    test = np.ones(K * n, dtype=bool)
    held_out_sum = None
    block_risk, cross = [], []
    for k, train in enumerate(parts):
        comp = np.atleast_2d(np.asarray(components(used, fit_predict(train, used)), dtype=float))
        test[:] = True
        test[k * n:(k + 1) * n] = False                        # the training block is not a test set
        comp[:, ~test] = 0.0
        held_out_sum = comp if held_out_sum is None else held_out_sum + comp
        mean = comp.sum(axis=1) / ((K - 1) * n)                 # R̂_k, m = (K − 1)·n
        centred = comp[:, test] - mean[:, None]
        block_risk.append(mean)
        cross.append(centred @ centred.T)
        if progress is not None:
            progress(k)
    return Components(n, np.array(block_risk).T, held_out_sum / (K - 1), np.array(cross))   # L̃_i = sum/(K − 1)


def fixed_predictor_cv(order: np.ndarray, n: int, components: np.ndarray) -> Components:
    """Eq. (3.2) for a FIXED prediction rule (the LLM, fn. 11): the same block structure with losses that do
    not depend on the training block, so L̃_i = ℓ_i and R̂_k = mean of ℓ over the complement of B_k; R̂(n) is
    the mean loss over the K·n used rows."""
    K = len(order) // n
    comp = np.atleast_2d(np.asarray(components, dtype=float))[:, order[:K * n]]
    block_risk = (comp.sum(axis=1)[:, None] - comp.reshape(comp.shape[0], K, n).sum(axis=2)) / ((K - 1) * n)
    # Σ_{T_k} (c − c̄_k)(c − c̄_k)ᵀ = Σ_all (c − μ)(c − μ)ᵀ − Σ_{B_k} (c − μ)(c − μ)ᵀ − m (c̄_k − μ)(c̄_k − μ)ᵀ,
    # centred at the overall mean μ first so that no large squares cancel.
    mu = comp.mean(axis=1)
    centred = comp - mu[:, None]
    own_centred = centred.reshape(comp.shape[0], K, n)
    shift = block_risk - mu[:, None]
    cross = ((centred @ centred.T)[None] - np.einsum("ckj,dkj->kcd", own_centred, own_centred)
             - (K - 1) * n * np.einsum("ck,dk->kcd", shift, shift))
    return Components(n, block_risk, comp, cross)
