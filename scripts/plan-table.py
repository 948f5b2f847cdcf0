#!/usr/bin/env python3
"""The production softmax's plan and % of the copy ceiling per shape, generated from results.json
files -- the table of docs/performance.md's "The dispatch" section, never typed by hand.

    scripts/plan-table.py RESULTS.json [RESULTS.json ...]              print the table
    scripts/plan-table.py RESULTS.json [...] --into docs/performance.md  replace the table between
                                                                        the plan-table markers
    scripts/plan-table.py ... --into FILE --name h100    the table between the markers of that name
                                                          (<!-- plan-table:h100:begin ... -->)
    scripts/plan-table.py A.json --plans-only > a; scripts/plan-table.py B.json --plans-only > b;
    diff a b                                             whether two runs ran the same plans (no
                                                          header line, no % columns)

For every shape (M, N) any of the files has a `softmax` record for, one row: the plan of each dtype
in short form (read from the record's `extra.plan`, the dispatch's own words) and its % of the
copy ceiling measured in that run. Shapes are listed in the order the files give them.
"""
import argparse
import json
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import markers as markers_file  # noqa: E402  (scripts/markers.py)


BEGIN = "<!-- plan-table:begin (scripts/plan-table.py; do not edit) -->"
END = "<!-- plan-table:end -->"


def markers(name):
    """The begin and end markers of the table called name ('' for the unnamed one)."""
    if not name:
        return BEGIN, END
    return (f"<!-- plan-table:{name}:begin (scripts/plan-table.py --name {name}; do not edit) -->",
            f"<!-- plan-table:{name}:end -->")


# Families whose short form is a format filled from the dispatch's sentence, one pattern a field.
SIMPLE = [
    (": block_row,", "block_row T={} K={}", [r"(\d+) threads x", r"threads x (\d+) 16-byte"]),
    (": block_hybrid,", "block_hybrid {} in registers + {} in smem",
     [r"the first (\d+) elements in registers", r"in registers \([^)]*\), the other \d+ \(([^)]*)\)"]),
    (": block_hybrid across a cluster", "block_hybrid C={}, {} per block: {} in registers + {} in smem",
     [r"cluster of (\d+) blocks", r"a slice of (\d+) elements", r"the first (\d+) in registers",
      r"in registers \([^)]*\), the other \d+ \(([^)]*)\)"]),
    (": cluster_tile,", "cluster_tile C={}, {} per block in registers",
     [r"cluster of (\d+) block", r"holding (\d+) elements"]),
    (": cluster_row,", "cluster_row C={}, {} slices in smem",
     [r"cluster of (\d+) block", r"elements \(([^)]*)\) per block"]),
]


def field(plan, pattern):
    m = re.search(pattern, plan)
    return m.group(1) if m else "?"


# split_row's forms: a phrase of the dispatch's sentence and its mark in the table, in this order.
SPLIT_FORMS = [
    ("read twice", ", part read twice"),
    ("prefetched into L2", ", L2 prefetch"),
    ("two slices per block", ", pipelined (2 slices)"),
    ("three slices per block", ", pipelined (3 slices)"),
    ("polled again before", ", early re-poll"),
    ("partials counted in", ", counted partials"),
    ("dealt to the row's blocks in turn", ", streamed parts interleaved"),
    ("a ring of", ", ring of chunk slots"),
]


def short(plan):
    """A compact form of the dispatch's sentence, e.g. 'warp_rows G=16 K=2, one block per 16 rows'."""
    if not plan:
        return "-"
    for marker, form, patterns in SIMPLE:
        if marker in plan:
            out = form.format(*(field(plan, p) for p in patterns))
            return out + (" (cp.async)" if "copied by the threads" in plan else "")
    if ": warp_rows packed," in plan:
        rows, vecs = field(plan, r"(\d+) row\(s\) whole in each"), field(plan, r"(\d+) vectors a lane")
        return f"warp_rows packed, {rows} rows a vector, K={vecs}"
    if ": warp_rows staged," in plan:
        rows, lanes = field(plan, r"(\d+) row\(s\) a warp a trip"), field(plan, r"by (\d+) lane\(s\)")
        return f"warp_rows staged R={rows} G={lanes}"
    if ": warp_rows," in plan:
        lanes, vecs = field(plan, r"(\d+) lane\(s\) per row"), field(plan, r"per row x (\d+) 16-byte")
        trip, per_block = field(plan, r"(\d+) rows per warp per trip"), field(plan, r"one block per (\d+) rows")
        grid = "persistent" if "grid-stride" in plan else "one block per " + per_block + " rows"
        two = lanes != "?" and trip != "?" and int(trip) == 2 * (32 // int(lanes))
        return (f"warp_rows G={lanes} K={vecs}, {grid}"
                + (", 2 rows per lane group per trip" if two else "")
                + (", two-pass" if "max reduced over its lanes first" in plan else "")
                + (", shared ends" if "two rows of a trip share stored once" in plan else ""))
    if ": split_row," in plan:
        blocks, rows = field(plan, r"over (\d+) blocks"), field(plan, r"(\d+) row\(s\) at a time\)")
        out = f"split_row S={blocks}, R={rows}"
        per_sm = field(plan, r"\((\d+) per SM;")
        if per_sm != "?":
            out += f", {per_sm} block(s) per SM"
        return out + "".join(suffix for marker, suffix in SPLIT_FORMS if marker in plan)
    return plan.split(":")[1].split(",")[0].strip() if ":" in plan else plan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+")
    ap.add_argument("--into", help="a Markdown file whose plan-table markers get the table")
    ap.add_argument("--name", default="", help="with --into: the markers of this name")
    ap.add_argument("--plans-only", action="store_true",
                    help="the plans alone, no source line and no %% columns: for diffing two runs")
    a = ap.parse_args()
    if a.name and not re.fullmatch(r"[a-z0-9-]+", a.name):
        sys.exit(f"plan-table.py: --name {a.name}: expected lower-case letters, digits and '-'")
    rows = {}  # (M, N) -> dtype -> record
    order = []
    sources = []
    for path in a.results:
        with open(path) as f:
            doc = json.load(f)
        if doc.get("schema") != "softmax-roofline/results":
            sys.exit(f"plan-table.py: {path}: not a softmax-roofline results document")
        for r in doc["records"]:
            if r.get("kernel") != "softmax":
                continue
            if path not in sources:  # only the files that have a `softmax` record are named
                sources.append(path)
            key = (r["M"], r["N"])
            if key not in rows:
                rows[key] = {}
                order.append(key)
            rows[key][r["dtype"]] = r
    dtypes = [d for d in ("fp32", "bf16", "fp16") if any(d in v for v in rows.values())]

    def cell(r):
        if r is None:
            return "-", "-"
        if r.get("status") != "ok":
            return r.get("status", "-"), "-"
        plan = (r.get("extra") or {}).get("plan")
        pct = r.get("pct_of_copy")
        return short(plan if isinstance(plan, str) else ""), (f"{pct:.1f}%" if pct is not None else "-")

    if a.plans_only:
        lines = ["| N | M |" + "".join(f" {d} plan |" for d in dtypes),
                 "|---:|---:|" + "---|" * len(dtypes)]
    else:
        lines = ["Generated from " + ", ".join(f"`{s}`" for s in sources) + " by `scripts/plan-table.py`.", ""]
        lines += ["| N | M |" + "".join(f" {d} plan | {d} |" for d in dtypes),
                  "|---:|---:|" + "---|---:|" * len(dtypes)]
    for (m, n) in order:
        cells = []
        for d in dtypes:
            plan, pct = cell(rows[(m, n)].get(d))
            cells += [plan] if a.plans_only else [plan, pct]
        lines.append(f"| {n} | {m} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    if not a.into:
        print(table)
        return
    begin, end = markers(a.name)
    markers_file.replace_between(a.into, begin, end, table, "plan-table.py", "plan-table")


if __name__ == "__main__":
    main()
