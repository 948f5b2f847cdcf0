#!/usr/bin/env python3
"""Per-kernel SASS census: what each function of `cuobjdump -sass` output holds, one table row each.

    cuobjdump -sass build/release/src/kernels/CMakeFiles/smr_prod_kernels.dir/production/split_row.cu.o \\
        | scripts/sass-census.py [--match REGEX] [-]
    scripts/sass-census.py [--match REGEX] FILE [FILE ...]      (FILE may be .gz)

Counts, per function: instructions; 16-byte global loads and stores (LDG.E.128, STG.E.128...) and
shared loads (LDS.128, with how many of them are predicated: @P / @!P); the copy engine's bulk
copies (UBLKCP: cp.async.bulk); local memory (LDL, STL: spills); MUFU.EX2; BSSY (the compiler's
reconvergence points around divergent branches) and S2UR (special registers read into uniform
registers -- in split_row's windowed kernels, the CTA's shared window read again for every shared
address: docs/performance.md, "split_row"). --match keeps the functions whose mangled name contains
REGEX (Python syntax). Prints a Markdown table; exits 1 when no function is found or matched, 2 on
a bad argument.
"""
import argparse
import gzip
import re
import sys

# One SASS instruction line: /*offset*/, an optional predicate, the opcode with its modifiers.
INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-f]{4,}\*/\s+(?P<pred>@!?U?P[0-9T]+\s+)?(?P<op>[A-Z][A-Z0-9_.]*)")
FUNCTION = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)")

COLUMNS = ("instructions", "LDG.128", "STG.128", "LDS.128", "LDS.128 predicated", "UBLKCP", "LDL",
           "STL", "MUFU.EX2", "BSSY", "S2UR")


def census_of(lines):
    """[(function name, {column: count})] in the order the functions appear."""
    functions = []
    counts = None
    for line in lines:
        m = FUNCTION.match(line)
        if m:
            counts = dict.fromkeys(COLUMNS, 0)
            functions.append((m.group("name"), counts))
            continue
        m = INSTRUCTION.match(line)
        if not m or counts is None:
            continue
        op = m.group("op")
        wide = "128" in op.split(".")  # LDG.E.128, STG.E.128.STRONG.SM, ...
        counts["instructions"] += 1
        if op.startswith("LDG.") and wide:
            counts["LDG.128"] += 1
        elif op.startswith("STG.") and wide:
            counts["STG.128"] += 1
        elif op.startswith("UBLKCP"):
            counts["UBLKCP"] += 1
        elif op == "LDS.128":
            counts["LDS.128"] += 1
            if m.group("pred"):
                counts["LDS.128 predicated"] += 1
        elif op.startswith("LDL"):
            counts["LDL"] += 1
        elif op.startswith("STL"):
            counts["STL"] += 1
        elif op == "MUFU.EX2":
            counts["MUFU.EX2"] += 1
        elif op == "BSSY":
            counts["BSSY"] += 1
        elif op == "S2UR":
            counts["S2UR"] += 1
    return functions


def read_lines(path):
    if path == "-":
        return sys.stdin.read().splitlines()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        return f.read().splitlines()


def table(functions):
    out = ["| function | " + " | ".join(COLUMNS) + " |",
           "|---|" + "---:|" * len(COLUMNS)]
    for name, counts in functions:
        out.append(f"| `{name}` | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=["-"], help="cuobjdump -sass output (- for stdin)")
    ap.add_argument("--match", help="only functions whose mangled name contains this regex")
    args = ap.parse_args(argv)
    try:
        pattern = re.compile(args.match) if args.match else None
    except re.error as e:
        print(f"sass-census: --match {args.match!r}: {e}", file=sys.stderr)
        return 2
    functions = []
    for path in args.files:
        try:
            functions += census_of(read_lines(path))
        except OSError as e:
            print(f"sass-census: {path}: {e.strerror or e}", file=sys.stderr)
            return 2
    if pattern:
        functions = [(n, c) for n, c in functions if pattern.search(n)]
    if not functions:
        what = f"matching {args.match!r} " if pattern else ""
        print(f"sass-census: no function {what}in {', '.join(args.files)}", file=sys.stderr)
        return 1
    print(table(functions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
