# lasso_data.py — the real data set of docs/loom-lasso.md's measurements:
# scikit-learn's copy of the Wisconsin breast cancer data (569 samples x
# 30 features), with every pairwise product and square added (569 x 495,
# in raw units: loom-lasso --standardize scales them), y the 0/1
# diagnosis.  Writes PREFIX.X.mtx (array) and PREFIX.y.mtx.
#   python3 lasso_data.py PREFIX
import sys

import numpy as np
from sklearn.datasets import load_breast_cancer

d = load_breast_cancer()
X = d.data
cols = [X[:, j] for j in range(X.shape[1])]
for a in range(X.shape[1]):
    for b in range(a, X.shape[1]):
        cols.append(X[:, a] * X[:, b])
Z = np.column_stack(cols)
with open(sys.argv[1] + ".X.mtx", "w") as f:
    f.write("%%%%MatrixMarket matrix array real general\n%d %d\n" % Z.shape)
    for v in Z.T.ravel():
        f.write("%.17g\n" % v)
with open(sys.argv[1] + ".y.mtx", "w") as f:
    f.write("%%%%MatrixMarket matrix array real general\n%d 1\n" % len(d.target))
    for v in d.target:
        f.write("%.17g\n" % v)
