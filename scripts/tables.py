#!/usr/bin/env python3
"""Markdown tables generated from results.json files -- never typed by hand.

    scripts/tables.py RESULTS.json [RESULTS.json ...] [--out FILE]
    scripts/tables.py --cards RESULTS.json [...] [--into README.md]   one row per run: the card, the
                                                                        code and dispatch it ran, the
                                                                        production softmax's % of copy
    scripts/tables.py --neighbours ODD.json [PADDED.json] [--into FILE --name NAME]
        rows off 16-byte boundaries beside their aligned neighbours: each N of ODD.json (a run of
        configs/odd-rows.yaml) that is not a whole number of 16-byte vectors in its dtype beside
        the aligned N nearest it in the same run, each padded row of
        PADDED.json (padded-rows.yaml, same card) beside the dense row of its N in ODD.json; the
        production softmax's % of each run's copy ceiling, the points between them, and its
        speed-up over each peer at the odd shape

Per dtype, one table of effective bandwidth (GB/s) and % of the copy ceiling measured in the same
run, per N, for every kernel and peer in the run; then the production `softmax`'s speed-up over
each peer per shape and its geometric mean, beside the geometric mean a kernel at the copy ceiling
would reach (the bound on any softmax's speed-up over that peer). Reads JSON only (the results schema,
docs/results-schema.md); a value that was not measured is shown as a dash.
"""
import argparse
import json
import math
import pathlib
import sys
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import markers  # noqa: E402  (scripts/markers.py)

PEERS = ["torch.softmax", "triton.fused", "cudnn"]
ORDER = ["softmax", "fused", "online", "unfused", "cudnn", "torch.softmax", "triton.fused"]


def load(path, tool="tables.py"):
    """A results document, or a one-line error naming `tool` and the file, and exit 1."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        sys.exit(f"{tool}: {path}: cannot read it ({e.strerror})")
    except json.JSONDecodeError as e:
        sys.exit(f"{tool}: {path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})")
    if not isinstance(doc, dict) or doc.get("schema") != "softmax-roofline/results":
        sys.exit(f"{tool}: {path}: not a softmax-roofline results document")
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


def other_y(rec, ours):
    """'†' where a peer wrote a y of another stride than softmax's record of the shape (torch.softmax
    returns a new, dense y where x is padded): not the same problem, its bytes written dense."""
    if rec is None or ours is None:
        return ""
    return "†" if rec.get("ld_y", rec["N"]) != ours.get("ld_y", ours["N"]) else ""


OTHER_Y_NOTE = ("(† the peer wrote a y of another row stride than `softmax`'s: torch.softmax returns "
                "a new, dense y where x is padded, so it never writes around the padding -- not the "
                "same problem.)\n")


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
        marked = False
        for m, n in shapes:
            ours = recs.get(("softmax", m, n))
            cells = [fmt_gbps(recs.get((k, m, n))) + other_y(recs.get((k, m, n)), ours) for k in kernels]
            marked = marked or any(c.endswith("†") for c in cells)
            out.append(f"| {n} | {m} | " + " | ".join(cells) + " |")
        out.append("")
        if marked:
            out.append(OTHER_Y_NOTE)
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
                                     + ("*" if marks(rec) or marks(recs.get(("softmax", m, n))) else "")
                                     + other_y(rec, recs.get(("softmax", m, n))))
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


CARDS_BEGIN = "<!-- card-table:begin (scripts/tables.py --cards; do not edit) -->"
CARDS_END = "<!-- card-table:end -->"
SHORT_ROWS = 32768  # the longest row every card's dispatch holds (block_row): the split of the columns


def pct_range(recs):
    """'97.0-100.0%' over the ok records, with how many of the others were skipped or failed."""
    ok = [r["pct_of_copy"] for r in recs if r.get("status") == "ok" and r.get("pct_of_copy") is not None]
    other = defaultdict(int)
    for r in recs:
        if r.get("status") != "ok":
            other[r.get("status", "?")] += 1
    text = "-" if not ok else (f"{ok[0]:.1f}%" if len(ok) == 1 else f"{min(ok):.1f}-{max(ok):.1f}%")
    if other:
        text += " (" + ", ".join(f"{n} {k}" for k, n in sorted(other.items())) + ")"
    return text


def card_row(doc, source):
    dev = doc.get("device") or {}
    limits = dev.get("dispatch_limits") or {}
    profile = limits.get("restricted_to_profile")
    code = f"sm_{str(limits.get('compute_capability', dev.get('compute_capability', '?'))).replace('.', '')}"
    dispatch = f"{code}, the `{profile}` profile" if profile else f"{code}, the card's own limits"
    fp32 = [r for r in doc.get("records", []) if r.get("kernel") == "softmax" and r.get("dtype") == "fp32"]
    short = [r for r in fp32 if r["N"] <= SHORT_ROWS]
    long = [r for r in fp32 if r["N"] > SHORT_ROWS]
    copy = (doc.get("ceilings") or {}).get("dram_GBps")
    return (f"| {dev.get('name', '?')} | {dispatch} | [`{source}`]({source}) | "
            + (f"{copy:.0f}" if copy else "-") + f" | {pct_range(short)} | {pct_range(long)} |")


def cards_table(paths):
    lines = ["Generated from the runs named in the table by `scripts/tables.py --cards`: the production "
             "`softmax`, fp32, % of the copy ceiling measured in the same run.", "",
             f"| card | code the dispatch plans for | run | copy GB/s | N <= {SHORT_ROWS} | N > {SHORT_ROWS} |",
             "|---|---|---|---:|---:|---:|"]
    lines += [card_row(load(p), p) for p in paths]
    return "\n".join(lines)


NEIGHBOURS_BEGIN = "<!-- neighbour-table:{name}:begin (scripts/tables.py --neighbours; do not edit) -->"
NEIGHBOURS_END = "<!-- neighbour-table:{name}:end -->"
VECTOR = {"fp32": 4, "bf16": 8, "fp16": 8}  # elements a 16-byte vector: rows of a multiple lie on boundaries


def nearest_aligned(n, aligned):
    """The aligned length nearest n on a log scale (the longer one on a tie), or None."""
    if not aligned:
        return None
    return min(aligned, key=lambda a: (abs(math.log(a / n)), -a))


def pct_cell(rec):
    if rec is None:
        return "-", None
    if rec.get("status") != "ok" or rec.get("pct_of_copy") is None:
        return rec.get("status", "-"), None
    return f"{rec['pct_of_copy']:.1f}%" + marks(rec), rec["pct_of_copy"]


def neighbours_table(odd_doc, odd_path, padded_doc=None, padded_path=None):
    """Per dtype: every row off a 16-byte boundary beside its aligned neighbour (see the usage)."""
    def index(doc):
        by = defaultdict(dict)  # dtype -> {(kernel, N): rec}
        for r in doc.get("records", []):
            by[r["dtype"]][(r["kernel"], r["N"])] = r
        return by

    def card(doc):
        return (doc.get("device") or {}).get("name", "unknown device")

    odd, padded = index(odd_doc), index(padded_doc) if padded_doc else {}
    dev = card(odd_doc)
    cards = {card(d) for d in (odd_doc, padded_doc) if d}
    if len(cards) > 1:
        sys.exit(f"tables.py: --neighbours: the runs are from different cards ({', '.join(sorted(cards))})")
    out = [f"Generated by `scripts/tables.py --neighbours` from `{odd_path}`"
           + (f" and `{padded_path}`" if padded_path else "")
           + f" ({dev}): the production `softmax`'s % of the copy ceiling measured in its own run; "
           "a row that is not a whole number of 16-byte vectors (4 fp32, 8 16-bit elements) beside the "
           "aligned N nearest it in the same run, a padded row (ld = N + pad) "
           "beside the dense row of the same N; the speed-ups are at the odd or padded shape, "
           "over the peers of its run (time ratio, median).", ""]
    for dtype in sorted(odd):
        recs = odd[dtype]
        ns = sorted({n for k, n in recs if k == "softmax"})
        v = VECTOR.get(dtype, 8)
        aligned = [n for n in ns if n % v == 0 and (recs[("softmax", n)].get("ld_x", n) == n)]
        # (N, the run its records come from, the aligned N of the odd run it is set beside)
        rows = [(n, recs, nearest_aligned(n, aligned)) for n in ns if n not in aligned]
        prec = padded.get(dtype, {})
        rows += [(n, prec, n) for n in sorted({n for k, n in prec if k == "softmax"})]
        if not rows:
            continue
        out += [f"### {dtype}\n",
                "| N | ld | M | `softmax` | aligned N | `softmax` there | points | "
                + " | ".join(f"vs `{p}`" for p in PEERS) + " |",
                "|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(PEERS)]
        marked = False
        for n, src, nb_n in rows:
            rec = src.get(("softmax", n))
            text, pct = pct_cell(rec)
            nb_text, nb_pct = pct_cell(recs.get(("softmax", nb_n)))
            points = f"{pct - nb_pct:+.1f}" if pct is not None and nb_pct is not None else "-"
            ours = median_s(rec)
            cells = []
            for p in PEERS:
                peer = src.get((p, n))
                theirs, mark = median_s(peer), other_y(peer, rec)
                cells.append(f"{theirs / ours:.2f}x{mark}" if ours and theirs
                             else (peer or {}).get("status", "-"))
                marked = marked or bool(mark)
            out.append(f"| {n} | {rec.get('ld_x', n)} | {rec['M']} | {text} | {nb_n if nb_n else '-'} | "
                       f"{nb_text} | {points} | " + " | ".join(cells) + " |")
        out.append("")
        if marked:
            out.append(OTHER_Y_NOTE)
    return "\n".join(out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--out", help="write here instead of stdout")
    ap.add_argument("--cards", action="store_true", help="one row per run (see above)")
    ap.add_argument("--neighbours", action="store_true", help="odd and padded rows beside aligned ones")
    ap.add_argument("--name", help="with --neighbours --into: the markers' name")
    ap.add_argument("--into", help="with --cards or --neighbours: replace the table between the markers")
    a = ap.parse_args()
    if a.neighbours:
        if len(a.results) > 2:
            ap.error("--neighbours takes an odd-rows run and at most one padded-rows run")
        if a.into and not a.name:
            ap.error("--neighbours --into needs --name (the markers' name)")
        table = neighbours_table(load(a.results[0]), a.results[0],
                                 *((load(a.results[1]), a.results[1]) if len(a.results) == 2 else ()))
        if not a.into:
            sys.stdout.write(table)
            return
        markers.replace_between(a.into, NEIGHBOURS_BEGIN.format(name=a.name),
                                NEIGHBOURS_END.format(name=a.name), table, "tables.py", "neighbour-table")
        return
    if a.cards:
        table = cards_table(a.results)
        if not a.into:
            print(table)
            return
        markers.replace_between(a.into, CARDS_BEGIN, CARDS_END, table, "tables.py", "card-table")
        return
    text = "<!-- generated by scripts/tables.py from the results files named below; do not edit -->\n\n"
    text += "\n".join(tables(load(p), p) for p in a.results)
    markers.emit(text, a.out)


if __name__ == "__main__":
    main()
