#!/usr/bin/python3
"""lr_small_data.py DIR -- scikit-learn's bundled small dense sets as
loom-lr reads them, for tests/apps/lr_small.t: digits (1 797 x 64, 10
classes), breast_cancer (569 x 30, standardized on the training part) and
iris (150 x 4, 3 classes), each split 80/20 stratified (random_state 0)
into DIR/NAME.train.svm and DIR/NAME.test.svm (LIBSVM, indices from 1),
and digits also as IDX (DIR/digits.{tr,te}-{img,lab}: its 0-16 values as
bytes).  Prints "NAME sklearn ACC liblinear-like ACC" lines: the test
accuracy of scikit-learn's LogisticRegression (lbfgs, C = 1) and of
liblinear's solver (liblinear, C = 1, one-vs-rest), the tools the issue
compares with.  Exit 1 without scikit-learn."""
import struct
import sys
import warnings

try:
    import numpy as np
    from sklearn.datasets import dump_svmlight_file, load_breast_cancer, load_digits, load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
except ImportError as e:
    sys.exit(f"lr_small_data.py: {e}")

warnings.filterwarnings("ignore")
out = sys.argv[1]


def idx(path, arr, dims):
    with open(path, "wb") as f:
        f.write(struct.pack(">BBBB", 0, 0, 0x08, len(dims)))
        f.write(struct.pack(">" + "I" * len(dims), *dims))
        f.write(np.asarray(arr).astype(np.uint8).tobytes())


for name, loader, std in [("digits", load_digits, False), ("bc", load_breast_cancer, True),
                          ("iris", load_iris, False)]:
    X, y = loader(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    if std:
        s = StandardScaler().fit(Xtr)
        Xtr, Xte = s.transform(Xtr), s.transform(Xte)
    dump_svmlight_file(Xtr, ytr, f"{out}/{name}.train.svm", zero_based=False)
    dump_svmlight_file(Xte, yte, f"{out}/{name}.test.svm", zero_based=False)
    a = LogisticRegression(max_iter=10000).fit(Xtr, ytr).score(Xte, yte)
    b = LogisticRegression(solver="liblinear", max_iter=10000).fit(Xtr, ytr).score(Xte, yte)
    print(f"{name} sklearn {a:.6f} liblinear {b:.6f}")
    if name == "digits":
        idx(f"{out}/digits.tr-img", Xtr, [len(Xtr), 8, 8])
        idx(f"{out}/digits.tr-lab", ytr, [len(ytr)])
        idx(f"{out}/digits.te-img", Xte, [len(Xte), 8, 8])
        idx(f"{out}/digits.te-lab", yte, [len(yte)])
