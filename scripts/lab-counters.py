#!/usr/bin/env python3
"""The counters of a run, per element: the table the lab's exercises ask you to read.

    scripts/lab-counters.py runs/lab-02/results.json [--kernel unfused] [--markdown]

One row per record that ran (status ok): kernel, M, N, the median time, the effective bandwidth,
and every hardware counter divided by the M x N elements -- DRAM bytes read and written, the
bytes between L1 and L2, through L1, the executed FP32 FLOPs (fadd + fmul + 2 ffma) and the
special-function (XU) instructions per element, next to what the model predicts. A counter that
was not read shows as a dash (docs/results-schema.md: not measured is absent, never 0).
Reads results.json only.
"""
import argparse
import json
import pathlib
import signal
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import metrics  # noqa: E402  (scripts/metrics.py: the names of src/core/metrics.hpp)

COLUMNS = [
    # header, function(record) -> number or None, format
    ("kernel", lambda r: r["kernel"], "{}"),
    ("M", lambda r: r["M"], "{}"),
    ("N", lambda r: r["N"], "{}"),
    ("time us", lambda r: (r.get("time") or {}).get("median_s") and r["time"]["median_s"] * 1e6, "{:.1f}"),
    ("GB/s", lambda r: r.get("effective_GBps"), "{:.0f}"),
    ("% copy", lambda r: r.get("pct_of_copy"), "{:.0f}"),
    ("DRAM rd B/el", lambda r: per(r, metrics.DRAM_READ), "{:.2f}"),
    ("DRAM wr B/el", lambda r: per(r, metrics.DRAM_WRITE), "{:.2f}"),
    ("model B/el", lambda r: (r.get("model") or {}).get("dram_bytes") and r["model"]["dram_bytes"] / elems(r), "{:.2f}"),
    ("L1-L2 B/el", lambda r: per(r, "l1_l2_bytes"), "{:.2f}"),
    ("L1 B/el", lambda r: per(r, metrics.L1_BYTES), "{:.2f}"),
    ("FLOP/el", lambda r: per(r, "flops_executed"), "{:.2f}"),
    ("fadd/el", lambda r: per(r, metrics.FADD_THREAD_INST), "{:.2f}"),
    ("fmul/el", lambda r: per(r, metrics.FMUL_THREAD_INST), "{:.2f}"),
    ("ffma/el", lambda r: per(r, metrics.FFMA_THREAD_INST), "{:.2f}"),
    ("XU/el", lambda r: per(r, "xu_thread_inst"), "{:.2f}"),
]


def elems(r):
    return r["M"] * r["N"]


def per(r, key):
    v = (r.get("counters") or {}).get(key)
    return None if v is None else v / elems(r)


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="a run's results.json")
    ap.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table instead of text")
    args = ap.parse_args()
    try:
        with open(args.results) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"lab-counters.py: {args.results}: {e}")
    if doc.get("schema") != "softmax-roofline/results":
        sys.exit(f"lab-counters.py: {args.results}: not a softmax-roofline results document")

    rows = []
    for r in doc.get("records", []):
        if r.get("status") != "ok" or (args.kernel and r["kernel"] not in args.kernel):
            continue
        cells = []
        for _, f, spec in COLUMNS:
            v = f(r)
            cells.append("-" if v is None else spec.format(v))
        rows.append(cells)
    head = [c[0] for c in COLUMNS]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for c in rows:
            print("| " + " | ".join(c) + " |")
    else:
        w = [max(len(h), *(len(c[i]) for c in rows)) if rows else len(h) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w[i]) for i, h in enumerate(head)))
        for c in rows:
            print("  ".join(x.rjust(w[i]) for i, x in enumerate(c)))
    skipped = [r for r in doc.get("records", []) if r.get("status") != "ok"]
    for r in skipped:
        print(f"{r['kernel']} M={r['M']} N={r['N']}: {r.get('status')}: {r.get('reason', '')}")
    if any(r.get("counters_reason") for r in doc.get("records", [])):
        reason = next(r["counters_reason"] for r in doc["records"] if r.get("counters_reason"))
        print(f"counters not read: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
