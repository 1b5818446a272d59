/* lasso_ws.c — the working-set solver's two local pieces (lasso.h):
 * the Gram rows of new working-set columns over this rank's rows, and
 * coordinate descent on the working set's subproblem through its Gram
 * matrix (glmnet's "covariance updates"), which every rank runs alike on
 * the same summed numbers, with nothing sent.  The outer loop (the
 * gradient, the duality gap, gap-safe screening, growing the set) is
 * lasso_dist.c's. */
#include "lasso.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <loom.h>

/* Contract in lasso.h.  Each thread spreads one column a of the set into
 * its own zeroed scratch vector and sums every earlier column b's entries
 * against it, in b's row order: the value of a pair depends on the pair
 * and the data only (not on the threads or on which call computed it), so
 * a restart that recomputes the Gram gets the same bits.  OpenMP. */
int loom_lasso_gram_local(const loom_lasso *l, const int64_t *set, int64_t from, int64_t to,
                          double *out)
{
    size_t n = (size_t)l->n;
    size_t base = (size_t)from * (size_t)(from + 1) / 2;
    int err = 0;
#pragma omp parallel reduction(| : err)
    {
        double *x = calloc(n ? n : 1, sizeof *x);
        if (!x)
            err = 1;
#pragma omp for schedule(dynamic, 1)
        for (int64_t a = from; a < to; a++) {
            if (!x)
                continue;
            int64_t ja = set[a];
            for (int64_t k = l->colptr[ja]; k < l->colptr[ja + 1]; k++)
                x[l->row[k]] = l->val[k];
            double *row = out + (size_t)a * (size_t)(a + 1) / 2 - base;
            for (int64_t b = 0; b <= a; b++) {
                int64_t jb = set[b], lo = l->colptr[jb], hi = l->colptr[jb + 1];
                double s = 0;
                if (hi - lo == l->n) /* a dense column: rows 0..n-1, the same terms */
                    for (int64_t k = lo; k < hi; k++)
                        s += l->val[k] * x[k - lo];
                else
                    for (int64_t k = lo; k < hi; k++)
                        s += l->val[k] * x[l->row[k]];
                row[b] = s;
            }
            for (int64_t k = l->colptr[ja]; k < l->colptr[ja + 1]; k++)
                x[l->row[k]] = 0;
        }
        free(x);
    }
    return err ? LOOM_ERR_NOMEM : LOOM_OK;
}

/* The subproblem's duality gap (lasso.h): P = ½rr + λ‖b‖₁ against the
 * dual point θ = s·r, s = min(1, λ / max_a |q_a|), whose value is
 * θᵀ(r + X_W b) − ½‖θ‖² = s(rr + qᵀb) − ½s²rr. */
static double sub_gap(const loom_lasso_sub *s, double lambda)
{
    double l1 = 0, qb = 0, qmax = 0;
    for (int64_t a = 0; a < s->w; a++) {
        l1 += fabs(s->b[a]);
        qb += s->q[a] * s->b[a];
        qmax = fmax(qmax, fabs(s->q[a]));
    }
    double sc = qmax > lambda ? lambda / qmax : 1;
    return 0.5 * s->rr + lambda * l1 - (sc * (s->rr + qb) - 0.5 * sc * sc * s->rr);
}

/* Anderson extrapolation of the last AA passes (Bertrand and Massias,
 * "Anderson acceleration of coordinate descent", 2021): the iterates
 * h[0..AA] after each pass, c minimizing ‖Σ_k c_k (h[k+1] − h[k])‖ with
 * Σ c_k = 1 (M z = 1, c = z / Σz, M the differences' inner products),
 * and b' = Σ_k c_k h[k+1] taken when it lowers the subproblem's objective
 * (computed through G, O(w²): about a pass).  tmp holds w values.
 * Returns 1 when taken (b, q and rr moved there). */
enum { AA = 5 };
static int anderson(loom_lasso_sub *s, double lambda, const double *h, double *tmp)
{
    int64_t w = s->w;
    double M[AA][AA + 1];
    for (int i = 0; i < AA; i++)
        for (int j = 0; j <= i; j++) {
            const double *ui = h + (i + 1) * w, *uj = h + (j + 1) * w;
            double v = 0;
            for (int64_t a = 0; a < w; a++)
                v += (ui[a] - ui[a - w]) * (uj[a] - uj[a - w]);
            M[i][j] = M[j][i] = v;
        }
    double tr = 0;
    for (int i = 0; i < AA; i++)
        tr += M[i][i], M[i][AA] = 1;
    if (!(tr > 0))
        return 0;
    for (int i = 0; i < AA; i++) /* a whisper of ridge: the differences are nearly parallel */
        M[i][i] += 1e-12 * tr;
    for (int i = 0; i < AA; i++) { /* Gaussian elimination, partial pivoting */
        int piv = i;
        for (int r = i + 1; r < AA; r++)
            if (fabs(M[r][i]) > fabs(M[piv][i]))
                piv = r;
        if (!(fabs(M[piv][i]) > 0))
            return 0;
        for (int c = 0; c <= AA; c++) {
            double t = M[i][c];
            M[i][c] = M[piv][c], M[piv][c] = t;
        }
        for (int r = i + 1; r < AA; r++) {
            double f = M[r][i] / M[i][i];
            for (int c = i; c <= AA; c++)
                M[r][c] -= f * M[i][c];
        }
    }
    double z[AA], sum = 0;
    for (int i = AA - 1; i >= 0; i--) {
        double v = M[i][AA];
        for (int c = i + 1; c < AA; c++)
            v -= M[i][c] * z[c];
        z[i] = v / M[i][i];
        sum += z[i];
    }
    if (!isfinite(sum) || sum == 0)
        return 0;
    double dl1 = 0, qd = 0;
    for (int64_t a = 0; a < w; a++) { /* tmp = b' − b */
        double v = 0;
        for (int k = 0; k < AA; k++)
            v += z[k] / sum * h[(k + 1) * w + a];
        tmp[a] = v - s->b[a];
        dl1 += fabs(v) - fabs(s->b[a]);
        qd += s->q[a] * tmp[a];
    }
    double dGd = 0;
    for (int64_t a = 0; a < w; a++) {
        if (tmp[a] == 0)
            continue;
        const double *Ga = s->G + (size_t)a * (size_t)s->ld;
        double v = 0;
        for (int64_t k = 0; k < w; k++)
            v += Ga[k] * tmp[k];
        dGd += tmp[a] * v;
    }
    double drr = dGd - 2 * qd;
    if (!(0.5 * drr + lambda * dl1 < 0))
        return 0;
    for (int64_t a = 0; a < w; a++) {
        if (tmp[a] == 0)
            continue;
        const double *Ga = s->G + (size_t)a * (size_t)s->ld;
        for (int64_t k = 0; k < w; k++)
            s->q[k] -= tmp[a] * Ga[k];
        s->b[a] += tmp[a];
    }
    s->rr += drr;
    return 1;
}

int64_t loom_lasso_sub_solve(loom_lasso_sub *s, double lambda, double eps, int64_t max_passes)
{
    int64_t updates = 0, w = s->w;
    s->passes = 0;
    double *h = malloc((size_t)(AA + 2) * (size_t)(w ? w : 1) * sizeof *h);
    int nh = 0; /* iterates in h */
    for (int64_t pass = 0; pass < max_passes; pass++) {
        if ((s->gap = sub_gap(s, lambda)) <= eps)
            break;
        if (h && nh == 0)
            memcpy(h, s->b, (size_t)w * sizeof *h), nh = 1;
        double moved = 0;
        for (int64_t a = 0; a < w; a++) {
            const double *Ga = s->G + (size_t)a * (size_t)s->ld;
            double c = Ga[a], old = s->b[a];
            if (!(c > 0) || (s->skip && s->skip[a] && old == 0))
                continue;
            updates++;
            double now = loom_lasso_soft(s->q[a] + c * old, lambda) / c, d = now - old;
            if (d == 0)
                continue;
            s->rr += d * (d * c - 2 * s->q[a]);
            s->b[a] = now;
            for (int64_t k = 0; k < w; k++) /* q −= d·G[:, a] (G symmetric: row a) */
                s->q[k] -= d * Ga[k];
            moved = fmax(moved, fabs(d));
        }
        s->passes = pass + 1;
        if (moved == 0) { /* a fixed point: nothing more to gain here */
            s->gap = sub_gap(s, lambda);
            break;
        }
        if (h) {
            memcpy(h + nh * w, s->b, (size_t)w * sizeof *h);
            if (++nh == AA + 1) {
                s->extrapolated += anderson(s, lambda, h, h + (AA + 1) * w);
                nh = 0;
            }
        }
    }
    free(h);
    return updates;
}
