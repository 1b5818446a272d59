# lasso_ref.py — the reference solver for tests/apps/lasso.t: scikit-learn's
# Lasso on MatrixMarket X and y, at lambda = RATIO * lambda_max.
#   python3 lasso_ref.py X.mtx y.mtx RATIO
# prints "lambda L objective F nnz K" (L and F with 17 digits).  sklearn
# minimizes (1/(2n))|y - Xw|^2 + alpha |w|_1, so alpha = lambda / n; the
# objective printed is loom-lasso's, 1/2 |y - Xw|^2 + lambda |w|_1.
import sys

import numpy as np
import scipy.io
from sklearn.linear_model import Lasso

X = scipy.io.mmread(sys.argv[1])
X = np.asarray(X.todense() if hasattr(X, "todense") else X, dtype=float)
y = np.asarray(scipy.io.mmread(sys.argv[2]), dtype=float).ravel()
n = X.shape[0]
lam = float(sys.argv[3]) * np.max(np.abs(X.T @ y))
model = Lasso(alpha=lam / n, fit_intercept=False, tol=1e-12, max_iter=1000000)
w = model.fit(X, y).coef_
obj = 0.5 * np.sum((y - X @ w) ** 2) + lam * np.sum(np.abs(w))
print("lambda %.17g objective %.17g nnz %d" % (lam, obj, np.count_nonzero(w)))
