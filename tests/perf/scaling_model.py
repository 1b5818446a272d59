"""scaling_model.py — the scaling model of docs/scaling.md, shared by
scaling_fit.py (fitted on simulated hosts) and scaling_check.py (checked
on one many-core host).

One epoch (one pass) of an app on P ranks, one per host (or core):

    t(P, B) = max(C / min(P, cores), V(P) * 8 / B)  +  a * R(P)  +  s * V(P)

  C      one rank's compute time per epoch (measured on one rank)
  cores  cores the ranks share
  R(P)   synchronization rounds per epoch, from the app's structure (rounds)
  a      seconds per round (fitted): messages, waiting, the software stack
  V(P)   bytes through one rank's link per epoch in its busier direction
         (measured; v0 + v1 / P fitted to extrapolate)
  B      the link's rate in bit/s (infinite when unshaped or on one host)
  s      seconds per byte of the software stack (fitted)"""
import math
import statistics

log2 = lambda p: math.ceil(math.log2(p)) if p > 1 else 0


def rounds(app, p, scale=1):
    """Synchronization rounds per epoch of APP on P ranks, for the problems
    of tests/perf/scaling_apps.sh made SCALE times larger (docs/scaling.md,
    "Rounds"); zero on one rank."""
    if p == 1:
        return 0.0
    return {
        "mf": p + 2 * log2(p),          # P ring rotations; gather of H; RMSE allreduce
        "lda": p + 2 * log2(p),         # P ring rotations; topic-sum and loglik allreduces
        "lr": 20000 * scale * (p - 1) / (20 * p) * log2(p),  # a sync every 20/(P-1) samples of each rank
        "lasso": 250 * log2(p),         # features / batch = 2000 / 8 rounds, an allreduce each
        "w2v": 80 * scale * log2(p),    # about 80 syncs a pass (per copy of the corpus)
    }[app]


APPS = ["mf", "lda", "lr", "lasso", "w2v"]


def time(C, a, s, v, p, cores, rate=math.inf, app="", scale=1):
    """The model's time per epoch (seconds)."""
    return max(C / min(p, cores), v * 8 / rate) + a * rounds(app, p, scale) + s * v


def lsq2(xs, ys):
    """Least squares y = p0 x0 + p1 x1 with p0, p1 >= 0 (tries the faces)."""
    def solve(cols):
        if len(cols) == 1:
            c = cols[0]
            den = sum(x[c] ** 2 for x in xs)
            return {c: max(0.0, sum(x[c] * y for x, y in zip(xs, ys)) / den) if den else 0.0}
        a = sum(x[0] ** 2 for x in xs); b = sum(x[0] * x[1] for x in xs); d = sum(x[1] ** 2 for x in xs)
        e = sum(x[0] * y for x, y in zip(xs, ys)); f = sum(x[1] * y for x, y in zip(xs, ys))
        det = a * d - b * b
        if abs(det) < 1e-30:
            return None
        return {0: (e * d - b * f) / det, 1: (a * f - b * e) / det}
    best = None
    for cols in ([0, 1], [0], [1]):
        p = solve(cols)
        if p is None or any(v < 0 for v in p.values()):
            continue
        p = [p.get(0, 0.0), p.get(1, 0.0)]
        err = sum((y - p[0] * x[0] - p[1] * x[1]) ** 2 for x, y in zip(xs, ys))
        if best is None or err < best[0]:
            best = (err, p)
    return best[1] if best else [0.0, 0.0]


def vfit(vp):
    """v0, v1 of V(P) = v0 + v1 / P fitted to {P: bytes} (least squares)."""
    ps = sorted(vp)
    if len(ps) < 2:
        return (vp[ps[0]] if ps else 0.0), 0.0
    mx = statistics.mean(1 / p for p in ps); my = statistics.mean(vp[p] for p in ps)
    den = sum((1 / p - mx) ** 2 for p in ps)
    v1 = sum((1 / p - mx) * (vp[p] - my) for p in ps) / den if den else 0.0
    return my - v1 * mx, v1
