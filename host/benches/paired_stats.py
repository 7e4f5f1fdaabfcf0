#!/usr/bin/env python3
"""Reads host/benches/paired.sh outputs (markdown rows `| n | a | b | ratio |`) from files
given as NAME=FILE[,FILE...] where the second file(s) ran in the other order
(ratio inverted), and prints per comparison: windows, median and geometric
mean of new/base, windows won, exact two-sided sign test p, and a two-sided
Wilcoxon signed-rank p (normal approximation) on log ratios.

    host/benches/paired_stats.py sweeper-off=/tmp/a.txt,/tmp/b.txt

The first file ran `paired.sh base=… name=…`, the others `paired.sh
name=… base=…`: their ratios are inverted so every ratio reads name / base.
docs/BENCHMARKS.md quotes it ("The hand-written layers re-measured")."""
import math, sys, statistics

def rows(path):
    out = []
    for line in open(path):
        parts = [p.strip() for p in line.strip().strip('|').split('|')]
        if len(parts) == 4 and parts[0].isdigit():
            out.append(float(parts[3]))
    return out

def sign_p(wins, n):
    k = min(wins, n - wins)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(0, k + 1)) / 2 ** n)

def wilcoxon_p(logs):
    d = [x for x in logs if x != 0]
    n = len(d)
    ranked = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(d[ranked[j + 1]]) == abs(d[ranked[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[ranked[k]] = (i + j) / 2 + 1
        i = j + 1
    w = sum(r for r, x in zip(ranks, d) if x > 0)
    mean = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    z = (w - mean) / sd
    return 2 * (1 - 0.5 * (1 + math.erf(abs(z) / math.sqrt(2))))

for arg in sys.argv[1:]:
    name, files = arg.split('=')
    first, *others = files.split(',')
    ratios = rows(first) + [1 / r for f in others for r in rows(f)]
    logs = [math.log(r) for r in ratios]
    n = len(ratios)
    wins = sum(r > 1 for r in ratios)
    print(f"{name}: {n} windows, median {statistics.median(ratios):.3f}, "
          f"geomean {math.exp(statistics.mean(logs)):.3f}, new answered more in {wins}, "
          f"sign p = {sign_p(wins, n):.2g}, Wilcoxon p = {wilcoxon_p(logs):.2g}")
