#!/usr/bin/python3
"""w2v_wordnet.py WORDNET_DIR CORPUS M VECTORS... -- how well word vectors
rank word similarity, without WordSim-353 (which no Debian package ships):
the Spearman correlation, over every pair of the M most frequent nouns of
CORPUS, between the vectors' cosine and WordNet's Wu-Palmer similarity of
the two words' first noun senses.  A noun is a word of 3 letters or more
that every VECTORS file holds and whose tagged uses in WordNet (its
cntlist counts) are more often as a noun than as anything else.
WORDNET_DIR is a WordNet 3.0 database as NLTK reads it (tests/perf/
w2v_gensim.sh makes one from Debian's wordnet-base).  Prints a comment
line naming the first nouns, then "FILE spearman RHO" per file.  Random
vectors score about 0; loom-w2v on the King James Bible 0.01 after one
weak epoch, 0.07 after 3 and 0.10 after 10 (docs/bench-w2v.md)."""
import collections
import sys
import warnings

import numpy as np
from scipy.stats import spearmanr

warnings.filterwarnings("ignore")  # NLTK: no multilingual WordNet here
from nltk.corpus.reader.wordnet import WordNetCorpusReader  # noqa: E402


def load(path):
    """A word2vec text file as {word: vector}."""
    v = {}
    with open(path) as f:
        f.readline()
        for line in f:
            p = line.rstrip().split(" ")
            v[p[0]] = np.array(p[1:], dtype=np.float64)
    return v


def nouns(wn, corpus, m, vecs):
    """The m most frequent nouns of corpus (above), with their first sense."""
    freq = collections.Counter(w for line in open(corpus) for w in line.split())
    tagged = lambda w, ss: sum(l.count() for s in ss for l in s.lemmas() if l.name().lower() == w)
    out = []
    for w, _ in freq.most_common():
        if len(w) < 3 or any(w not in v for v in vecs):
            continue
        n = wn.synsets(w, "n")
        if n and tagged(w, n) > tagged(w, [s for s in wn.synsets(w) if s.pos() != "n"]):
            out.append((w, n[0]))
            if len(out) == m:
                break
    return out


def main():
    wndir, corpus, m, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    wn = WordNetCorpusReader(wndir, None)
    vecs = [load(p) for p in files]
    words = nouns(wn, corpus, m, vecs)
    pairs = [(i, j) for i in range(len(words)) for j in range(i)]
    gold = [words[i][1].wup_similarity(words[j][1]) or 0.0 for i, j in pairs]
    print(f"# {len(words)} nouns, {len(pairs)} pairs; the first: "
          + " ".join(w for w, _ in words[:12]))
    for path, v in zip(files, vecs):
        x = np.array([v[w] for w, _ in words])
        x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-30
        cos = x @ x.T
        rho = spearmanr([cos[i, j] for i, j in pairs], gold).correlation
        print(f"{path} spearman {rho:.4f}")


if __name__ == "__main__":
    main()
