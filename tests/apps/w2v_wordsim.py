#!/usr/bin/python3
"""w2v_wordsim.py WORDSIM.tsv VECTORS... -- WordSim-353 (Finkelstein et
al. 2002) for word vectors: the Spearman correlation between the human
scores of the word pairs and the vectors' cosines, over the pairs whose two
words (lower-cased) every VECTORS file holds, so that files are compared
on the same pairs.  VECTORS is word2vec's text format (loom-w2v --output).
Prints "# PAIRS of TOTAL pairs", then "FILE spearman RHO" per file.  Ties
get their mean rank.  Pure Python: no package beyond python3.  Used by
tests/perf/structure.sh; the data is ../shared/data/wordsim353 (read in
place, never copied into the repository)."""
import math
import sys


def load_vectors(path):
    vec = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        head = f.readline().split()
        if len(head) != 2:
            sys.exit(f"{path}:1: expected 'WORDS DIM'")
        dim = int(head[1])
        for n, line in enumerate(f, 2):
            parts = line.rstrip().split(" ")
            if len(parts) != dim + 1:
                sys.exit(f"{path}:{n}: expected a word and {dim} numbers")
            vec[parts[0].lower()] = [float(x) for x in parts[1:]]
    return vec


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else 0.0


def cosine(u, v):
    nu = math.sqrt(sum(x * x for x in u))
    nv = math.sqrt(sum(x * x for x in v))
    return sum(x * y for x, y in zip(u, v)) / (nu * nv) if nu and nv else 0.0


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: w2v_wordsim.py WORDSIM.tsv VECTORS...")
    pairs = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                sys.exit(f"{sys.argv[1]}:{n}: expected WORD1 TAB WORD2 TAB SCORE")
            pairs.append((parts[0].lower(), parts[1].lower(), float(parts[2])))
    vecs = [load_vectors(p) for p in sys.argv[2:]]
    kept = [p for p in pairs if all(p[0] in v and p[1] in v for v in vecs)]
    print(f"# {len(kept)} of {len(pairs)} pairs")
    if len(kept) < 3:
        sys.exit("w2v_wordsim.py: fewer than 3 pairs in every file's vocabulary")
    human = [p[2] for p in kept]
    for path, v in zip(sys.argv[2:], vecs):
        rho = spearman(human, [cosine(v[a], v[b]) for a, b, _ in kept])
        print(f"{path} spearman {rho:.4f}")


main()
