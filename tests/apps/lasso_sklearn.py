# lasso_sklearn.py — scikit-learn's Lasso on MatrixMarket X and y, for
# tests/apps/lasso_cli.t and tests/perf/lasso.sh.
#   python3 lasso_sklearn.py X.mtx y.mtx RATIO [--standardize] [--model FILE]
#                            [--target F]
# lambda = RATIO * lambda_max of the (standardized) problem.  sklearn
# minimizes 1/(2n)|y - Xw - b|^2 + alpha |w|_1, so alpha = lambda / n; the
# objective printed is loom-lasso's, 1/2 |y - Xw - b|^2 + lambda |w|_1.
# --standardize: columns centred and scaled to population standard
# deviation 1 (sum of squares n, as loom-lasso --standardize), y centred
# (fit_intercept=True); --model writes the coefficients in the original
# units, then the intercept.  Prints
#   lambda L objective F nnz K seconds S tol T
# where S is the fit time at tol 1e-12 or, with --target F, the median of
# three fits at the loosest tol in 1e-2 .. 1e-12 whose objective is <= F.
import sys
import time

import numpy as np
import scipy.io
from sklearn.linear_model import Lasso

args = sys.argv[1:]
std = "--standardize" in args
model = args[args.index("--model") + 1] if "--model" in args else None
target = float(args[args.index("--target") + 1]) if "--target" in args else None
X = scipy.io.mmread(args[0])
X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
y = np.asarray(scipy.io.mmread(args[1]), dtype=float).ravel()
n = X.shape[0]
mean = X.mean(axis=0) if std else np.zeros(X.shape[1])
scale = np.sqrt(((X - mean) ** 2).mean(axis=0)) if std else np.ones(X.shape[1])
scale[scale == 0] = 1
Z = (X - mean) / scale
yc = y - y.mean() if std else y
lam = float(args[2]) * np.max(np.abs(Z.T @ yc))


def fit(tol):
    m = Lasso(alpha=lam / n, fit_intercept=std, tol=tol, max_iter=10000000)
    t0 = time.perf_counter()
    m.fit(Z, y)
    t = time.perf_counter() - t0
    r = y - Z @ m.coef_ - (m.intercept_ if std else 0)
    return m, 0.5 * r @ r + lam * np.sum(np.abs(m.coef_)), t


tol = 1e-12
m, obj, secs = fit(tol)
if target is not None:
    for t in [10.0 ** -k for k in range(2, 13)]:
        m, obj, secs = fit(t)
        if obj <= target:
            tol = t
            secs = sorted([secs] + [fit(t)[2] for _ in range(2)])[1]
            break
if model:
    with open(model, "w") as f:
        for v in m.coef_ / scale:
            f.write("%.17g\n" % v)
        if std:
            f.write("%.17g\n" % (m.intercept_ - np.sum(m.coef_ / scale * mean)))
print("lambda %.17g objective %.17g nnz %d seconds %.6g tol %g"
      % (lam, obj, np.count_nonzero(m.coef_), secs, tol))
