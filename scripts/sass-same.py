#!/usr/bin/env python3
"""Which kernels of one build compile to the same SASS as in other builds.

Reads `cuobjdump -sass` outputs (of the same source file built at different commits) and prints,
for every function of NEW, the first of the BASE outputs whose instructions are the same
instruction for instruction (addresses, encodings and the anonymous namespace's per-path hash
ignored), or `none`. A change that should touch only some instantiations is checked this way
without a GPU: every function equal to a build that passed the GPU tests runs that build's code.

    scripts/sass-same.py NEW.txt BASE.txt [BASE.txt ...]

Exit status 0; 2 when a file cannot be read or holds no function.
"""
import argparse
import re
import subprocess
import sys

FUNCTION = re.compile(r"^\s+Function : (\S+)")
INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+")


def functions(path, originals=None):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        print(f"sass-same.py: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    found, current = {}, None
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            current = ANON.sub("ANON", m.group(1))
            found[current] = []
            if originals is not None:
                originals[current] = m.group(1)
        elif current is not None:
            m = INSTRUCTION.search(line)
            if m:
                found[current].append(ANON.sub("ANON", m.group(1)))
    if not found:
        print(f"sass-same.py: {path}: no function (is it cuobjdump -sass output?)", file=sys.stderr)
        sys.exit(2)
    return found


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True).stdout.splitlines()
        return out if len(out) == len(names) else names
    except (OSError, subprocess.CalledProcessError):
        return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new", help="cuobjdump -sass output of the build to check")
    ap.add_argument("bases", nargs="+", help="cuobjdump -sass outputs to compare with, in order")
    args = ap.parse_args()
    originals = {}
    new = functions(args.new, originals)
    bases = [(path, functions(path)) for path in args.bases]
    names = sorted(new)
    counts = {}
    print(f"| function | instructions | same as |")
    print(f"|---|---:|---|")
    for name, pretty in zip(names, demangle([originals[n] for n in names])):
        same = next((path for path, fs in bases if fs.get(name) == new[name]), "none")
        counts[same] = counts.get(same, 0) + 1
        pretty = pretty.replace("(anonymous namespace)::", "")
        pretty = pretty[: pretty.rfind(">(") + 1] if ">(" in pretty else pretty.split("(")[0]
        print(f"| `{pretty}` | {len(new[name])} | {same} |")
    print()
    print(", ".join(f"{n} the same as {p}" if p != "none" else f"{n} like none"
                    for p, n in counts.items()))


if __name__ == "__main__":
    main()
