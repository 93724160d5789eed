#!/usr/bin/env python3
# Prints, per benchmark and figure, the medians of sides A and B and the median and range of
# the per-pair ratios B/A, from a raw file written as move-events-sync-*.txt is.
import sys, statistics, collections
def parse(f, section):
    # returns the (label, bench, {metric: value}) of the lines of section ("A/B events", ...), in order
    out=[]
    inside=False
    for l in open(f):
        if l.startswith('#'):
            inside = l[1:].strip() == section
            continue
        if not inside:
            continue
        p=l.split()
        label, bench = p[0], p[1]
        m={}
        toks=p[5:]
        for i in range(0,len(toks)-1,2):
            try: m[toks[i+1]]=float(toks[i])
            except ValueError: pass
        out.append((label,bench,m))
    return out
def pairs(rows):
    # group per bench: list of A values and B values in order; pair i-th A with i-th B
    a=collections.defaultdict(list); b=collections.defaultdict(list)
    for label,bench,m in rows:
        (a if label=='A' else b)[bench].append(m)
    return a,b
def table(f, section, figs):
    a,b=pairs(parse(f, section))
    for bench in a:
        for fig in figs:
            ra=[x.get(fig) for x in a[bench]]; rb=[x.get(fig) for x in b[bench]]
            if None in ra or None in rb: continue
            r=[y/x for x,y in zip(ra,rb) if x]
            print(f"{bench:40s} {fig:22s} A {statistics.median(ra):10.4g} B {statistics.median(rb):10.4g} B/A {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f})")
# usage: move-pairs-table.py RAW SECTION FIGURES, e.g.
#   move-pairs-table.py move-events-sync-d9f3069.txt "A/B events" k-events/s,k-allocs/event
table(sys.argv[1], sys.argv[2], sys.argv[3].split(','))
