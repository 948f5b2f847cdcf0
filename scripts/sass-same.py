#!/usr/bin/env python3
"""Which kernels of one build compile to the same SASS as in other builds.

Reads `cuobjdump -sass` outputs (of the same source file built at different commits) and prints,
for every function of NEW, the first of the BASE outputs whose instructions are the same
instruction for instruction (addresses, encodings and the anonymous namespace's per-path hash
ignored), or `none`. A change that should touch only some instantiations is checked this way
without a GPU: every function equal to a build that passed the GPU tests runs that build's code.

    scripts/sass-same.py NEW.txt BASE.txt [BASE.txt ...]      (each may be .gz, NEW may be -)

Exit status 0; 2 when a file cannot be read or holds no function.
"""
import argparse
import importlib.util
import pathlib
import re
import subprocess
import sys

# The listing's reader (plain, .gz or -) and its function header: sass-census.py's.
_spec = importlib.util.spec_from_file_location(
    "sass_census", pathlib.Path(__file__).resolve().parent / "sass-census.py")
sass_census = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_census)

# An instruction without its offset and encoding; the anonymous namespace's per-path hash.
INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+")


def functions(path):
    """{name with the hash replaced: (mangled name, [instructions])} of one listing."""
    try:
        lines = sass_census.read_lines(path)
    except OSError as e:
        print(f"sass-same.py: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    found, current = {}, None
    for line in lines:
        m = sass_census.FUNCTION.match(line)
        if m:
            current = []
            found[ANON.sub("ANON", m.group("name"))] = (m.group("name"), current)
        elif current is not None:
            m = INSTRUCTION.search(line)
            if m:
                current.append(ANON.sub("ANON", m.group(1)))
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
    new = functions(args.new)
    bases = [(path, functions(path)) for path in args.bases]
    names = sorted(new)
    counts = {}
    print("| function | instructions | same as |")
    print("|---|---:|---|")
    for name, pretty in zip(names, demangle([new[n][0] for n in names])):
        code = new[name][1]
        same = next((path for path, fs in bases if name in fs and fs[name][1] == code), "none")
        counts[same] = counts.get(same, 0) + 1
        pretty = pretty.replace("(anonymous namespace)::", "")
        pretty = pretty[: pretty.rfind(">(") + 1] if ">(" in pretty else pretty.split("(")[0]
        print(f"| `{pretty}` | {len(code)} | {same} |")
    print()
    print(", ".join(f"{n} the same as {p}" if p != "none" else f"{n} like none"
                    for p, n in counts.items()))


if __name__ == "__main__":
    main()
