#!/usr/bin/env python3
"""QuACK's published H100 bf16 bandwidth beside the production softmax's measured one, per shape.

    scripts/quack-table.py RESULTS.json [--published docs/published/quack-h100-bf16.json]
                           [--into FILE]

RESULTS.json is a run of configs/quack-h100.yaml (the same shapes, bf16), on an H100 for the
comparison to mean anything: the table names the run's card. QuACK's numbers are the ones it
published (docs/published/, read off its chart), marked so, never measured here; ours and the
peers' are the run's effective GB/s (2 x M x N x 2 bytes / median time: QuACK's formula) with the
copy ceiling measured in the same run. --into replaces the table between the quack-table markers
of FILE. Reads JSON only.
"""
import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import markers  # noqa: E402  (scripts/markers.py)


ROOT = pathlib.Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "docs" / "published" / "quack-h100-bf16.json"
BEGIN = "<!-- quack-table:begin (scripts/quack-table.py; do not edit) -->"
END = "<!-- quack-table:end -->"
PEERS = [("torch.softmax", "torch.softmax"), ("triton.fused", "Triton seed")]


def fail(msg):
    print(f"quack-table.py: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path, schema=None):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")
    if schema and doc.get("schema") != schema:
        fail(f"{path}: not a {schema} document")
    return doc


def table(run, run_path, published):
    recs = {(r["kernel"], r["M"], r["N"]): r for r in run.get("records", []) if r.get("dtype") == "bf16"}
    dev = (run.get("device") or {}).get("name", "unknown device")
    copy = (run.get("ceilings") or {}).get("dram_GBps")

    def gbps(kernel, m, n):
        r = recs.get((kernel, m, n))
        if r is None:
            return None, "-"
        if r.get("status") != "ok" or r.get("effective_GBps") is None:
            return None, r.get("status", "-")
        return r["effective_GBps"], f"{r['effective_GBps']:.0f}"

    lines = [f"QuACK: published ({published['source']}), not measured here. Measured: `{run_path}` "
             f"({dev}; copy ceiling {copy:.0f} GB/s in the same run)." if copy else
             f"QuACK: published, not measured here. Measured: `{run_path}` ({dev}).", "",
             "| N | M | QuACK GB/s (published) | `softmax` GB/s | `softmax` / QuACK | "
             + " | ".join(f"{label} GB/s" for _, label in PEERS) + " |",
             "|---:|---:|---:|---:|---:|" + "---:|" * len(PEERS)]
    for p in published["points"]:
        m, n, theirs = p["M"], p["N"], p["GBps"]
        ours, ours_text = gbps("softmax", m, n)
        ratio = f"{ours / theirs:.3f}x" if ours else "-"
        peers = [gbps(k, m, n)[1] for k, _ in PEERS]
        lines.append(f"| {n} | {m} | {theirs} | {ours_text} | {ratio} | " + " | ".join(peers) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--published", default=str(PUBLISHED))
    ap.add_argument("--into")
    a = ap.parse_args()
    run = load(a.results, "softmax-roofline/results")
    published = load(a.published)
    if not isinstance(published.get("points"), list) or not published["points"]:
        fail(f"{a.published}: no points")
    text = table(run, a.results, published)
    if not a.into:
        print(text)
        return
    markers.replace_between(a.into, BEGIN, END, text, "quack-table.py", "quack-table")


if __name__ == "__main__":
    main()
