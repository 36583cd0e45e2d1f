/* Lane-batched kernel of the pairs bootstrap (estimate/bootstrap_lanes.py): the cross-products M of four draws at
 * once, one draw per lane of a 4-wide double vector, by the algorithm of estimate/bootstrap_kernel.py (weighted FWL
 * in normal-equation form, CG on the date-level Schur complement with the full sample's preconditioner, the same
 * stopping rule) on the same random streams (SplitMix64, one per draw), so that every draw equals that kernel's to
 * rounding (tests/test_bootstrap.py).
 *
 * Why C and not numba: the speed comes from SIMD across draws (four draws share every load of a row's data, date
 * level and entity boundaries, and every pass is branch-free), and numba does not vectorise across draws (measured:
 * scalar code, slower than the per-draw kernel; benchmarks/RESULTS.md). GCC/Clang vector extensions are portable;
 * target_clones compiles the kernel for AVX-512, AVX2 and baseline x86-64 and picks one when the library is loaded.
 *
 * Singleton levels are dropped lane by lane as the numba kernel drops them. What is not done here (the caller,
 * estimate/bootstrap.py, computes these draws with the numba kernel): a count above max_count (255 in use: weights are
 * one byte; a multinomial count of 256 does not happen in practice) and a draw on which CG has not converged after
 * max_iter steps (the dense solve). Those draws get steps = -1.
 *
 * Multiply-adds are fused where the CPU has FMA (GCC's default -ffp-contract=fast), so draws agree between the AVX-512,
 * AVX2 and baseline builds and with the numba kernel to rounding (~1e-15 relative), not bit for bit; on one machine a
 * rerun gives the same bits. Not fusing costs 12% here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LANES 4
typedef double vd __attribute__((vector_size(32), aligned(8)));
typedef int64_t vl __attribute__((vector_size(32), aligned(8)));
typedef uint64_t vu __attribute__((vector_size(32), aligned(8)));
typedef uint8_t vb __attribute__((vector_size(4), aligned(1)));

/* target_clones with arch= levels: GCC 11 or later on x86-64 Linux (ifunc); elsewhere, or built with
 * -DLAPBIAS_NO_CLONES (tests/test_bootstrap.py builds each level on its own), one build for the compiler's target. */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    !defined(LAPBIAS_NO_CLONES)
#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CLONES
#endif
#define EXPORT __attribute__((visibility("default")))
#define INLINE static inline __attribute__((always_inline))

static const double CG_ACCURACY = 1e-12;         /* bootstrap_kernel.CG_ACCURACY */
static const double COLLINEAR_TOLERANCE = 1e-10; /* bootstrap_kernel.COLLINEAR_TOLERANCE */
static const uint64_t GAMMA = 0x9E3779B97F4A7C15ULL;

INLINE uint64_t mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

INLINE vd load_weights(const uint8_t *row) {
    vb bytes;
    memcpy(&bytes, row, LANES);
    return __builtin_convertvector(bytes, vd);
}

INLINE vd where_positive(vl mask, vd value) { return (vd)((vl)value & mask); } /* value where mask, else 0 */

INLINE double lane(vd v, int k) { return v[k]; }

INLINE int64_t pick(double u, int64_t n_units) {
    int64_t chosen = (int64_t)(u * (1.0 / 9007199254740992.0) * (double)n_units); /* floor(u 2^-53 n), as numba */
    return chosen < n_units ? chosen : n_units - 1; /* u 2^-53 n rounded up to n: impossible below 2^52 units */
}

INLINE void count_pick(uint8_t *counts, int64_t chosen, int k, int64_t max_count, int *overflow) {
    uint8_t *count = counts + chosen * LANES + k;
    if (*count < max_count)
        ++*count;
    else
        overflow[k] = 1;
}

/* counts of draw first_draw + k in byte k of counts[unit] (bootstrap_kernel.draw_counts, same stream); a count past
 * max_count (at most 255, the byte) marks the lane in `overflow` and stops counting there. The four streams run side
 * by side in vector registers where the CPU multiplies 64-bit integers in vectors (AVX-512DQ: 2.5x faster here);
 * elsewhere one after the other (an emulated vector multiply is no faster on AVX2 and slower on baseline x86-64). */
INLINE void draw_lanes(uint64_t seed, int64_t first_draw, int n_lanes, int64_t n_units, int64_t max_count,
                       uint8_t *counts, int *overflow) {
    memset(counts, 0, (size_t)n_units * LANES);
    uint64_t start[LANES];
    for (int k = 0; k < LANES; k++) start[k] = mix(mix(seed) ^ (uint64_t)(first_draw + k));
#if defined(__x86_64__) && defined(__GNUC__)
    if (n_lanes == LANES && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
        vu state = {start[0], start[1], start[2], start[3]};
        for (int64_t j = 0; j < n_units; j++) {
            state += GAMMA;
            vu x = state;
            x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
            x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
            vd u = __builtin_convertvector((vl)((x ^ (x >> 31)) >> 11), vd); /* < 2^53: exact */
            for (int k = 0; k < LANES; k++) count_pick(counts, pick(u[k], n_units), k, max_count, overflow);
        }
        return;
    }
#endif
    for (int k = 0; k < n_lanes; k++) {
        uint64_t state = start[k];
        for (int64_t j = 0; j < n_units; j++) {
            state += GAMMA;
            count_pick(counts, pick((double)(mix(state) >> 11), n_units), k, max_count, overflow);
        }
    }
}

/* out = S V for the four lanes' Schur complements (bootstrap_kernel._schur_times): diag(W_d) V - C' diag(1/W_a) C V,
 * every row passed (a row of weight 0 adds 0). V, out: n_d x 4 columns of lane vectors. */
INLINE void schur_times(const vd *V, vd *out, const uint8_t *W, const int32_t *d, const int64_t *start, int64_t n_a,
                        int64_t n_d, const vd *inverse_a, const vd *total_d) {
    for (int64_t t = 0; t < n_d; t++)
        for (int c = 0; c < 4; c++) out[t * 4 + c] = total_d[t] * V[t * 4 + c];
    for (int64_t e = 0; e < n_a; e++) {
        vd u0 = {0}, u1 = {0}, u2 = {0}, u3 = {0};
        for (int64_t i = start[e]; i < start[e + 1]; i++) {
            vd w = load_weights(W + i * LANES);
            const vd *v = V + (int64_t)d[i] * 4;
            u0 += w * v[0];
            u1 += w * v[1];
            u2 += w * v[2];
            u3 += w * v[3];
        }
        vd inverse = inverse_a[e];
        u0 *= inverse;
        u1 *= inverse;
        u2 *= inverse;
        u3 *= inverse;
        for (int64_t i = start[e]; i < start[e + 1]; i++) {
            vd w = load_weights(W + i * LANES);
            vd *o = out + (int64_t)d[i] * 4;
            o[0] -= w * u0;
            o[1] -= w * u1;
            o[2] -= w * u2;
            o[3] -= w * u3;
        }
    }
}

/* out = diag(g) P diag(g) V (bootstrap_kernel._times), P the n_d x n_d preconditioner, two rows of P at a time so
 * that each scaled row of V is loaded once for both. scaled: work array of V's size. */
INLINE void precondition(const double *P, const vd *V, const vd *g, vd *scaled, vd *out, int64_t n_d) {
    for (int64_t s = 0; s < n_d; s++)
        for (int c = 0; c < 4; c++) scaled[s * 4 + c] = V[s * 4 + c] * g[s];
    int64_t t = 0;
    for (; t + 1 < n_d; t += 2) {
        const double *p0 = P + t * n_d, *p1 = p0 + n_d;
        vd a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, b0 = {0}, b1 = {0}, b2 = {0}, b3 = {0};
        for (int64_t s = 0; s < n_d; s++) {
            const vd *v = scaled + s * 4;
            double x = p0[s], y = p1[s];
            a0 += x * v[0];
            a1 += x * v[1];
            a2 += x * v[2];
            a3 += x * v[3];
            b0 += y * v[0];
            b1 += y * v[1];
            b2 += y * v[2];
            b3 += y * v[3];
        }
        out[t * 4 + 0] = a0 * g[t];
        out[t * 4 + 1] = a1 * g[t];
        out[t * 4 + 2] = a2 * g[t];
        out[t * 4 + 3] = a3 * g[t];
        out[t * 4 + 4] = b0 * g[t + 1];
        out[t * 4 + 5] = b1 * g[t + 1];
        out[t * 4 + 6] = b2 * g[t + 1];
        out[t * 4 + 7] = b3 * g[t + 1];
    }
    for (; t < n_d; t++) {
        const double *p0 = P + t * n_d;
        vd a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int64_t s = 0; s < n_d; s++) {
            const vd *v = scaled + s * 4;
            a0 += p0[s] * v[0];
            a1 += p0[s] * v[1];
            a2 += p0[s] * v[2];
            a3 += p0[s] * v[3];
        }
        out[t * 4 + 0] = a0 * g[t];
        out[t * 4 + 1] = a1 * g[t];
        out[t * 4 + 2] = a2 * g[t];
        out[t * 4 + 3] = a3 * g[t];
    }
}

/* column dots: out[c] = sum_t X[t, c] Y[t, c], per lane */
INLINE void column_dots(const vd *X, const vd *Y, int64_t n_d, vd out[4]) {
    for (int c = 0; c < 4; c++) out[c] = (vd){0};
    for (int64_t t = 0; t < n_d; t++)
        for (int c = 0; c < 4; c++) out[c] += X[t * 4 + c] * Y[t * 4 + c];
}

/* The CG of bootstrap_kernel._solve_cg for every lane and column, each with its own step and stopping test; lanes
 * with active[k] = 0 are left at X = 0, R = B. Returns in steps[k] the step at which lane k stopped, -1 if it had
 * not converged after max_iter steps. */
INLINE void solve_cg(const vd *B, vd *X, vd *R, vd *Pd, vd *Q, vd *Zr, vd *scaled, const uint8_t *W, const int32_t *d,
                     const int64_t *start, int64_t n_a, int64_t n_d, const vd *inverse_a, const vd *total_d,
                     const vd *g, const double *inverse, int64_t max_iter, const double M[LANES][4][4],
                     const double raw[LANES][4], const int *active, int64_t *steps) {
    double rz[4][LANES], floor_[4][LANES], alpha[4][LANES], beta[4][LANES];
    int done[4][LANES];
    vd dots[4], bx[4];
    for (int64_t t = 0; t < n_d * 4; t++) {
        X[t] = (vd){0};
        R[t] = B[t];
    }
    precondition(inverse, R, g, scaled, Zr, n_d);
    memcpy(Pd, Zr, sizeof(vd) * n_d * 4);
    column_dots(R, Zr, n_d, dots);
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < LANES; k++) {
            rz[c][k] = lane(dots[c], k);
            floor_[c][k] = rz[c][k] * CG_ACCURACY * CG_ACCURACY;
            done[c][k] = !active[k];
        }
    for (int k = 0; k < LANES; k++) steps[k] = active[k] ? -1 : 0;
    for (int64_t step = 0; step <= max_iter; step++) {
        column_dots(B, X, n_d, bx);
        int all_done = 1;
        for (int k = 0; k < LANES; k++) {
            int lane_done = 1;
            for (int c = 0; c < 4; c++) {
                double entry = M[k][c][c] - lane(bx[c], k), smallest = COLLINEAR_TOLERANCE * raw[k][c];
                double target = CG_ACCURACY * (entry > smallest ? entry : smallest);
                if (target < floor_[c][k]) target = floor_[c][k];
                done[c][k] = done[c][k] || rz[c][k] <= target;
                lane_done &= done[c][k];
            }
            if (lane_done && steps[k] < 0) steps[k] = step;
            all_done &= lane_done;
        }
        if (all_done || step == max_iter) return;
        schur_times(Pd, Q, W, d, start, n_a, n_d, inverse_a, total_d);
        column_dots(Pd, Q, n_d, dots);
        for (int c = 0; c < 4; c++) {
            for (int k = 0; k < LANES; k++) {
                double pq = lane(dots[c], k);
                alpha[c][k] = pq > 0 && !done[c][k] ? rz[c][k] / pq : 0.0;
            }
            vd step_alpha = {alpha[c][0], alpha[c][1], alpha[c][2], alpha[c][3]};
            for (int64_t t = 0; t < n_d; t++) {
                X[t * 4 + c] += step_alpha * Pd[t * 4 + c];
                R[t * 4 + c] -= step_alpha * Q[t * 4 + c];
            }
        }
        precondition(inverse, R, g, scaled, Zr, n_d);
        column_dots(R, Zr, n_d, dots);
        for (int c = 0; c < 4; c++) {
            for (int k = 0; k < LANES; k++) {
                double rz_new = lane(dots[c], k);
                beta[c][k] = rz[c][k] > 0 && alpha[c][k] > 0 ? rz_new / rz[c][k] : 0.0;
                if (alpha[c][k] > 0) rz[c][k] = rz_new;
            }
            vd step_beta = {beta[c][0], beta[c][1], beta[c][2], beta[c][3]};
            for (int64_t t = 0; t < n_d; t++) Pd[t * 4 + c] = Zr[t * 4 + c] + step_beta * Pd[t * 4 + c];
        }
    }
}

/* Total weight of each entity and date in the four lanes; the lanes with a level of total weight exactly 1 (a
 * singleton) are marked in the result. */
INLINE vl level_totals(const uint8_t *W, const int32_t *d, const int64_t *start, int64_t n_a, int64_t n_d,
                       vd *total_a, vd *total_d) {
    const vd one = {1, 1, 1, 1};
    vl singleton = {0};
    for (int64_t t = 0; t < n_d; t++) total_d[t] = (vd){0};
    for (int64_t e = 0; e < n_a; e++) {
        vd total = {0};
        for (int64_t i = start[e]; i < start[e + 1]; i++) {
            vd w = load_weights(W + i * LANES);
            total += w;
            total_d[d[i]] += w;
        }
        total_a[e] = total;
        singleton |= total == one;
    }
    for (int64_t t = 0; t < n_d; t++) singleton |= total_d[t] == one;
    return singleton;
}

INLINE int any_lane(vl mask) { return (mask[0] | mask[1] | mask[2] | mask[3]) != 0; }

/* bootstrap_kernel.drop_singletons lane by lane: zero the weight of rows alone in a level of either FE (a level of
 * total weight 1; a row drawn twice is not alone), sweep after sweep until no level has total 1. The fixed point does
 * not depend on the order of removal, so it is the numba kernel's and reghdfe's on the materialised draw. Called with
 * the totals of W and its singleton mask; leaves the totals of the final W. */
INLINE void drop_singletons(uint8_t *W, const int32_t *d, const int64_t *start, int64_t n_a, int64_t n_d, vd *total_a,
                            vd *total_d, vl singleton) {
    const vd one = {1, 1, 1, 1};
    while (any_lane(singleton)) {
        for (int64_t e = 0; e < n_a; e++) {
            vl alone_a = total_a[e] == one;
            for (int64_t i = start[e]; i < start[e + 1]; i++) {
                vl alone = alone_a | (total_d[d[i]] == one); /* the row's weight is its level's whole total */
                for (int k = 0; k < LANES; k++) W[i * LANES + k] &= (uint8_t)~alone[k];
            }
        }
        singleton = level_totals(W, d, start, n_a, n_d, total_a, total_d);
    }
}

/* Sums of one pass over the rows for the four lanes (bootstrap_kernel.cross_products), given the entity totals:
 * the inverse entity totals (0 for an empty entity) in inverse_a, f = sum w z and q = sum w z^2 (for the centred sums
 * of squares), m = z~' W z~ (upper triangle) and B = D' W z~, with z~ = z minus its within-entity weighted mean. */
typedef struct {
    vd f[4], q[4], m[4][4];
} Moments;

INLINE Moments moment_pass(const double *z, const uint8_t *W, const int32_t *d, const int64_t *start, int64_t n_a,
                           int64_t n_d, const vd *total_a, vd *inverse_a, vd *B) {
    Moments out = {0};
    const vd one = {1, 1, 1, 1};
    for (int64_t t = 0; t < n_d * 4; t++) B[t] = (vd){0};
    for (int64_t e = 0; e < n_a; e++) {
        vd s[4] = {{0}};
        for (int64_t i = start[e]; i < start[e + 1]; i++) {
            vd w = load_weights(W + i * LANES);
            const double *zi = z + i * 4;
            for (int c = 0; c < 4; c++) {
                s[c] += w * zi[c];
                out.q[c] += w * zi[c] * zi[c];
            }
        }
        vd inverse_total = where_positive(total_a[e] > 0, one / total_a[e]);
        inverse_a[e] = inverse_total;
        for (int c = 0; c < 4; c++) {
            out.f[c] += s[c];
            s[c] *= inverse_total;
        }
        for (int64_t i = start[e]; i < start[e + 1]; i++) {
            vd w = load_weights(W + i * LANES), r[4], v[4];
            const double *zi = z + i * 4;
            vd *b = B + (int64_t)d[i] * 4;
            for (int c = 0; c < 4; c++) {
                r[c] = zi[c] - s[c];
                v[c] = w * r[c];
                b[c] += v[c];
            }
            for (int c = 0; c < 4; c++)
                for (int c2 = c; c2 < 4; c2++) out.m[c][c2] += v[c] * r[c2];
        }
    }
    return out;
}

/* M (n_draws x 4 x 4), raw (n_draws x 4) and steps (n_draws) of draws first_draw .. first_draw + n_draws - 1, as
 * bootstrap_kernel.bootstrap_cross_products computes them; steps = -1 where that kernel must compute the draw (a count
 * past max_count, CG not converged). Rows sorted by the FE "a" (entity e = rows start[e] .. start[e + 1] - 1), d the
 * other FE's level of each row, z the 4 standardized columns, row i's weight in a draw counts[unit[i]]. Returns 0, -1
 * when memory could not be allocated, -2 when max_count is not in 1 .. 255. */
EXPORT CLONES int64_t lapbias_lanes_cross_products(int64_t n, int64_t n_a, int64_t n_d, const double *z,
                                                   const int32_t *d, const int64_t *start, const int64_t *unit,
                                                   int64_t n_units, uint64_t seed, int64_t first_draw,
                                                   int64_t n_draws, const double *inverse, int64_t max_iter,
                                                   int64_t max_count, double *M_out, double *raw_out,
                                                   int64_t *steps_out) {
    if (max_count < 1 || max_count > 255) return -2;
    uint8_t *counts = malloc((size_t)n_units * LANES), *W = malloc((size_t)n * LANES);
    vd *total_a = malloc(sizeof(vd) * n_a), *inverse_a = malloc(sizeof(vd) * n_a);
    vd *total_d = malloc(sizeof(vd) * n_d), *g = malloc(sizeof(vd) * n_d), *work = malloc(sizeof(vd) * n_d * 4 * 7);
    if (!counts || !W || !total_a || !inverse_a || !total_d || !g || !work) {
        free(counts), free(W), free(total_a), free(inverse_a), free(total_d), free(g), free(work);
        return -1;
    }
    vd *B = work, *X = B + n_d * 4, *R = X + n_d * 4, *Pd = R + n_d * 4, *Q = Pd + n_d * 4, *Zr = Q + n_d * 4;
    vd *scaled = Zr + n_d * 4;
    const vd one = {1, 1, 1, 1};
    for (int64_t first = 0; first < n_draws; first += LANES) {
        int n_lanes = n_draws - first < LANES ? (int)(n_draws - first) : LANES;
        int overflow[LANES] = {0}, active[LANES];
        draw_lanes(seed, first_draw + first, n_lanes, n_units, max_count, counts, overflow);
        const uint32_t *lanes_of_unit = (const uint32_t *)counts;
        for (int64_t i = 0; i < n; i++) memcpy(W + i * LANES, lanes_of_unit + unit[i], LANES);
        drop_singletons(W, d, start, n_a, n_d, total_a, total_d, level_totals(W, d, start, n_a, n_d, total_a, total_d));
        Moments sums = moment_pass(z, W, d, start, n_a, n_d, total_a, inverse_a, B);
        vd grand = {0};
        for (int64_t e = 0; e < n_a; e++) grand += total_a[e];
        for (int64_t t = 0; t < n_d; t++) {
            vd root = {sqrt(total_d[t][0]), sqrt(total_d[t][1]), sqrt(total_d[t][2]), sqrt(total_d[t][3])};
            g[t] = where_positive(total_d[t] > 0, one / root); /* the draw's preconditioner scale, diag(W_d)^-1/2 */
        }
        double M[LANES][4][4], raw[LANES][4];
        for (int k = 0; k < LANES; k++) {
            int empty = !(grand[k] > 0); /* every row a singleton: M = 0, beta_3 not identified (as numba) */
            for (int c = 0; c < 4; c++) {
                for (int c2 = c; c2 < 4; c2++) M[k][c][c2] = M[k][c2][c] = empty ? 0.0 : sums.m[c][c2][k];
                raw[k][c] = empty ? 0.0 : sums.q[c][k] - sums.f[c][k] * sums.f[c][k] / grand[k];
            }
            active[k] = k < n_lanes && !overflow[k] && !empty;
            for (int c = 1; c < 4 && active[k]; c++)
                if (raw[k][c] <= 0 || M[k][c][c] <= COLLINEAR_TOLERANCE * raw[k][c]) active[k] = 0; /* not identified */
        }
        int64_t steps[LANES];
        solve_cg(B, X, R, Pd, Q, Zr, scaled, W, d, start, n_a, n_d, inverse_a, total_d, g, inverse, max_iter, M, raw,
                 active, steps);
        for (int k = 0; k < n_lanes; k++) {
            double *out = M_out + (first + k) * 16;
            for (int c = 0; c < 4; c++)
                for (int c2 = 0; c2 < 4; c2++) {
                    double entry = M[k][c][c2];
                    for (int64_t t = 0; t < n_d; t++)
                        entry -= lane(B[t * 4 + c], k) * lane(X[t * 4 + c2], k) +
                                 lane(X[t * 4 + c], k) * lane(R[t * 4 + c2], k);
                    out[c * 4 + c2] = entry;
                }
            for (int c = 0; c < 4; c++) raw_out[(first + k) * 4 + c] = raw[k][c];
            steps_out[first + k] = overflow[k] ? -1 : steps[k];
        }
    }
    free(counts), free(W), free(total_a), free(inverse_a), free(total_d), free(g), free(work);
    return 0;
}

/* The sha256 of this source file, passed by setup.py at build time (estimate/bootstrap_lanes.py refuses a compiled
 * file whose source has changed since: an edit whose rebuild failed would otherwise leave the old kernel in use). */
#ifndef LAPBIAS_SOURCE_SHA256
#define LAPBIAS_SOURCE_SHA256 ""
#endif
EXPORT const char *lapbias_lanes_source_sha256(void) { return LAPBIAS_SOURCE_SHA256; }

/* A module object, so that the package finds the compiled file by import; the kernel is called through ctypes. */
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bootstrap_lanes",
                                    "Lane-batched bootstrap kernel (called through ctypes).", -1,
                                    NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__bootstrap_lanes(void) { return PyModule_Create(&module); }
