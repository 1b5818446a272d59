#!/usr/bin/python3
"""w2v_gensim.py CORPUS WORKERS EPOCHS DIM SEED OUT.vec -- gensim's
word2vec with loom-w2v's defaults (skip-gram, negative sampling with 5
noise words, window 5, subsampling 1e-3, min count 5, step 0.025 falling
to ~0), on CORPUS as loom-w2v reads it (one sentence a line, words split
on spaces; tests/perf/w2v_gensim.sh lowercases the text and keeps letters
only, so both see the same words).  Prints "seconds S vocabulary V": the
seconds of gensim's train() alone (the vocabulary is built before, as
loom-w2v's CSV counts only its epochs)."""
import sys
import time

from gensim.models import Word2Vec


def main():
    corpus, workers, epochs, dim, seed, out = sys.argv[1:7]
    sentences = [line.split() for line in open(corpus)]
    m = Word2Vec(vector_size=int(dim), window=5, min_count=5, sg=1, hs=0, negative=5,
                 sample=1e-3, alpha=0.025, min_alpha=0.0001, workers=int(workers),
                 seed=int(seed))
    m.build_vocab(sentences)
    t0 = time.perf_counter()
    m.train(sentences, total_examples=len(sentences), epochs=int(epochs))
    seconds = time.perf_counter() - t0
    m.wv.save_word2vec_format(out)
    print(f"seconds {seconds:.4f} vocabulary {len(m.wv)}")


if __name__ == "__main__":
    main()
