#!/usr/bin/python3
"""w2v_wordnet.py CORPUS M VECTORS... -- how well word vectors rank word
similarity, without WordSim-353 (which no Debian package ships): the
Spearman correlation, over every pair of the M most frequent nouns of
CORPUS, between the vectors' cosine and WordNet's Wu-Palmer similarity of
the two words' first noun senses.  A noun is a word of 3 letters or more
that every VECTORS file holds and whose tagged uses in WordNet (its
cntlist counts) are more often as a noun than as anything else.

WordNet 3.0 comes from Debian's wordnet-base, read by python3-nltk.  NLTK
also wants a `lexnames` file, which wordnet-base leaves out; the table is
in the package's lexnames(5WN) page, so this builds it there, in a scratch
copy of the directory.  Prints a comment line naming the first nouns, then
"FILE spearman RHO" per file.  With --check alone: whether this host
can score (exit 0), else what it lacks (exit 1).  Random vectors score about 0; loom-w2v on
the King James Bible 0.01 after one weak epoch, 0.07 after 3 and 0.10
after 10 (docs/loom-w2v.md).  Used by tests/apps/w2v.t and
tests/perf/w2v_gensim.sh."""
import collections
import gzip
import os
import re
import sys
import tempfile
import warnings

WORDNET = "/usr/share/wordnet"
LEXNAMES_MAN = "/usr/share/man/man5/lexnames.5WN.gz"

if sys.argv[1:] == ["--check"]:
    # "w2v_wordnet.py --check": exit 0 if this host can score, else say
    # what is missing and exit 1 (the callers skip: w2v.t, w2v_gensim.sh,
    # w2v_layouts.sh)
    try:
        import nltk  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        sys.exit("python3-nltk or python3-numpy is not installed")
    if not os.path.isfile(f"{WORDNET}/data.noun") or not os.path.isfile(LEXNAMES_MAN):
        sys.exit("wordnet-base is not installed")
    sys.exit(0)

import numpy as np  # noqa: E402

warnings.filterwarnings("ignore")  # NLTK: no multilingual WordNet here
from nltk.corpus.reader.wordnet import WordNetCorpusReader  # noqa: E402


def wordnet_dir(scratch):
    """A directory NLTK can read: Debian's, plus a lexnames file made from
    the man page's table ("NN<tab>name<tab>contents"; the category is 1
    for nouns, 2 verbs, 3 adjectives, 4 adverbs)."""
    for name in os.listdir(WORDNET):
        os.symlink(os.path.join(WORDNET, name), os.path.join(scratch, name))
    kind = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
    with gzip.open(LEXNAMES_MAN, "rt") as man, open(os.path.join(scratch, "lexnames"), "w") as out:
        for line in man:
            m = re.match(r"^(\d\d)\t(\S+)", line)
            if m:
                out.write(f"{m[1]}\t{m[2]}\t{kind[m[2].split('.')[0]]}\n")
    return scratch


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
    freq = collections.Counter(w for line in open(corpus) for w in line.lower().split())
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


def ranks(a):
    """Ranks 1..n of a, ties sharing the mean of their ranks."""
    order = np.argsort(a, kind="mergesort")
    s = a[order]
    first = np.r_[True, s[1:] != s[:-1]]          # where each run of equal values starts
    starts = np.r_[np.nonzero(first)[0], len(a)]  # run k covers sorted places starts[k]..starts[k+1]-1
    run = np.cumsum(first) - 1
    r = np.empty(len(a))
    r[order] = (starts[run] + starts[run + 1] + 1) / 2.0
    return r


def spearman(x, y):
    return float(np.corrcoef(ranks(np.asarray(x)), ranks(np.asarray(y)))[0, 1])


def main():
    corpus, m, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    with tempfile.TemporaryDirectory() as scratch:
        wn = WordNetCorpusReader(wordnet_dir(scratch), None)
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
        print(f"{path} spearman {spearman([cos[i, j] for i, j in pairs], gold):.4f}")


if __name__ == "__main__":
    main()
