#!/usr/bin/env python3
"""Markdown tables generated from results.json files -- never typed by hand.

    scripts/tables.py RESULTS.json [RESULTS.json ...] [--out FILE]

Per dtype, one table of effective bandwidth (GB/s) and % of the copy ceiling measured in the same
run, per N, for every kernel and peer in the run; then the production `softmax`'s speed-up over
each peer per shape and its geometric mean, beside the geometric mean a kernel at the copy ceiling
would reach (the bound on any softmax's speed-up over that peer). Reads JSON only (the results schema,
docs/results-schema.md); a value that was not measured is shown as a dash.
"""
import argparse
import json
import math
import sys
from collections import defaultdict

PEERS = ["torch.softmax", "triton.fused", "cudnn"]
ORDER = ["softmax", "fused", "online", "unfused", "cudnn", "torch.softmax", "triton.fused"]


def load(path):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema") != "softmax-roofline/results":
        sys.exit(f"tables.py: {path}: not a softmax-roofline results document")
    return doc


def marks(rec):
    """' *' when the record's noise criterion did not converge, ' ↓' when its SM clock fell.

    A record without the fields (runs made before the criterion, peers) is "not recorded" and gets
    no mark: missing is not unconverged."""
    if rec is None:
        return ""
    t = rec.get("time") or {}
    out = ""
    if (t.get("noise") or {}).get("converged") is False:
        out += " \\*"
    if (t.get("clocks") or {}).get("fell") is True:
        out += " ↓"
    return out


def fmt_gbps(rec):
    if rec is None:
        return "-"
    if rec.get("status") != "ok" or rec.get("effective_GBps") is None:
        return rec.get("status", "-")
    pct = rec.get("pct_of_copy")
    text = f"{rec['effective_GBps']:.0f} ({pct:.0f}%)" if pct is not None else f"{rec['effective_GBps']:.0f}"
    return text + marks(rec)


def median_s(rec):
    if rec is None or rec.get("status") != "ok":
        return None
    t = rec.get("time") or {}
    return t.get("median_s")


def tables(doc, source):
    out = []
    ceil = doc.get("ceilings", {})
    dev = (doc.get("device") or {}).get("name", "unknown device")
    out.append(f"Source: `{source}` ({dev}, created {doc.get('created', '?')}); command: "
               f"`{doc.get('command', '?')}`. Copy ceiling measured in the same run: "
               f"{ceil.get('dram_GBps', float('nan')):.0f} GB/s ({ceil.get('source', '?')})."
               + ("" if doc.get("complete", True) else
                  " **Partial run**: the sweep was stopped before its end; a dash is a shape it did not reach.")
               + "\n")
    by = defaultdict(dict)  # (dtype) -> {(kernel, M, N): rec}
    for r in doc.get("records", []):
        by[r["dtype"]][(r["kernel"], r["M"], r["N"])] = r
    for dtype, recs in sorted(by.items()):
        kernels = sorted({k for k, _, _ in recs}, key=lambda k: (ORDER.index(k) if k in ORDER else 99, k))
        kernels = [k for k in kernels if k not in ("copy", "fma")]
        shapes = sorted({(m, n) for _, m, n in recs}, key=lambda s: (s[1], s[0]))
        out.append(f"### {dtype}: effective bandwidth, GB/s (% of copy)\n")
        out.append("| N | M | " + " | ".join(f"`{k}`" for k in kernels) + " |")
        out.append("|---:|---:|" + "---:|" * len(kernels))
        for m, n in shapes:
            out.append(f"| {n} | {m} | " + " | ".join(fmt_gbps(recs.get((k, m, n))) for k in kernels) + " |")
        out.append("")
        if any(marks(r) for r in recs.values()):
            out.append("(\\* the record's median did not meet its noise target before its time cap; "
                       "↓ its SM clock fell or was throttled during its samples: docs/timing.md.)\n")
        peers = [p for p in PEERS if p in kernels]
        if "softmax" in kernels and peers:
            out.append(f"### {dtype}: speed-up of `softmax` over each peer (time ratio, median)\n")
            out.append("| N | M | " + " | ".join(f"vs `{p}`" for p in peers) + " |")
            out.append("|---:|---:|" + "---:|" * len(peers))
            # Per peer, the logs of our speed-up and of the most any kernel could show on the same
            # shapes: the peer's time over the time at the copy ceiling's bandwidth (100 / the
            # peer's % of copy).
            logs, bound = defaultdict(list), defaultdict(list)
            for m, n in shapes:
                ours = median_s(recs.get(("softmax", m, n)))
                cells = []
                for p in peers:
                    rec = recs.get((p, m, n))
                    theirs = median_s(rec)
                    if ours and theirs:
                        cells.append(f"{theirs / ours:.2f}x"
                                     + ("*" if marks(rec) or marks(recs.get(("softmax", m, n))) else ""))
                        logs[p].append(math.log(theirs / ours))
                        pct = rec.get("pct_of_copy")  # (rec is ok: it has a median)
                        if pct:
                            bound[p].append(math.log(100.0 / pct))
                    else:
                        cells.append("-")
                out.append(f"| {n} | {m} | " + " | ".join(cells) + " |")
            for label, per_peer in (("geomean", logs), ("geomean at the copy ceiling", bound)):
                out.append(f"| {label} | | " + " | ".join(
                    f"{math.exp(sum(per_peer[p]) / len(per_peer[p])):.2f}x" if per_peer[p] else "-"
                    for p in peers) + " |")
            out.append("")
            out.append("(The last row is the geometric mean a kernel at 100% of the copy ceiling at "
                       "every shape would reach over each peer, on the shapes in that peer's mean: "
                       "no softmax can exceed it.)\n")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", help="write here instead of stdout")
    a = ap.parse_args()
    text = "<!-- generated by scripts/tables.py from the results files named below; do not edit -->\n\n"
    text += "\n".join(tables(load(p), p) for p in a.results)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
