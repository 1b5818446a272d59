#!/usr/bin/env python3
"""mf_bias.py — the baseline loom-mf's defaults must not lose to on sparse
ratings (tests/apps/mf_sparse.t, docs/loom-mf.md "Sparse ratings"), and
the sparse sets it is measured on.

  mf_bias.py split OUT PERCENT SEED FILE...
      keeps each rating line of FILE... with probability PERCENT/100
      (Python's Mersenne Twister seeded with SEED: the same sets on every
      machine), and writes 80% of those kept to OUT.train, the rest to
      OUT.test.
  mf_bias.py rmse TRAIN TEST [LAMBDA] [SWEEPS]
      fits the user + item bias model r = mu + b_u + b_i by alternating
      least squares (exact minimizer of one side given the other; SWEEPS
      sweeps, default 20) of sum (r - mu - b_u - b_i)^2 + LAMBDA (sum b_u^2
      + sum b_i^2) (default LAMBDA 10), mu the training mean; prints the
      test RMSE (an unseen user or item has bias 0).
Files: MovieLens triples, 'user item rating [timestamp]'."""
import random
import sys


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w:
                out.append((w[0], w[1], float(w[2])))
    return out


def split(out, percent, seed, files):
    g = random.Random(seed)
    with open(out + ".train", "w") as tr, open(out + ".test", "w") as te:
        for path in files:
            with open(path) as f:
                for line in f:
                    if g.random() * 100 < percent:
                        (tr if g.random() < 0.8 else te).write(line)


def rmse(train, test, lam, sweeps):
    tr, te = load(train), load(test)
    mu = sum(r for _, _, r in tr) / len(tr)
    bu, bi = {}, {}
    for _ in range(sweeps):
        for side in (0, 1):
            s, n = {}, {}
            for u, i, r in tr:
                key, other = (u, bi.get(i, 0.0)) if side == 0 else (i, bu.get(u, 0.0))
                s[key] = s.get(key, 0.0) + r - mu - other
                n[key] = n.get(key, 0) + 1
            b = {k: s[k] / (lam + n[k]) for k in s}
            if side == 0:
                bu = b
            else:
                bi = b
    e = sum((r - mu - bu.get(u, 0.0) - bi.get(i, 0.0)) ** 2 for u, i, r in te)
    return (e / len(te)) ** 0.5


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) >= 5 and a[0] == "split":
        split(a[1], float(a[2]), int(a[3]), a[4:])
    elif len(a) in (3, 4, 5) and a[0] == "rmse":
        lam = float(a[3]) if len(a) > 3 else 10.0
        sweeps = int(a[4]) if len(a) > 4 else 20
        print("%.6f" % rmse(a[1], a[2], lam, sweeps))
    else:
        sys.exit(__doc__)
