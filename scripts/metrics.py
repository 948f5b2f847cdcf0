#!/usr/bin/env python3
"""The hardware metric names, read from src/core/metrics.hpp: the one place they are spelled.

    import metrics; metrics.DRAM_READ        in a script of this folder (kDramRead -> DRAM_READ)
    scripts/metrics.py                       print every NAME and its metric, one a line
    scripts/metrics.py DRAM_READ DRAM_WRITE  print those metrics, comma-separated (ncu --metrics)
"""
import pathlib
import re
import sys

HEADER = pathlib.Path(__file__).resolve().parent.parent / "src" / "core" / "metrics.hpp"
DEFINITION = re.compile(r'inline constexpr std::string_view k(\w+)\s*=\s*"((?:[^"\\]|\\.)*)";')


def python_name(cpp_name):
    """kL2SectorsFromL1's name part -> L2_SECTORS_FROM_L1."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", cpp_name).upper()


def load(header=HEADER):
    """{PYTHON_NAME: metric} in the header's order; C++ escapes (\\\\, \\") undone."""
    out = {}
    for m in DEFINITION.finditer(header.read_text()):
        out[python_name(m.group(1))] = re.sub(r"\\(.)", r"\1", m.group(2))
    if not out:
        raise SystemExit(f"metrics.py: no metric definitions in {header}")
    return out


ALL = load()
globals().update(ALL)


def main(argv):
    if not argv:
        for name, metric in ALL.items():
            print(name, metric)
        return 0
    unknown = [a for a in argv if a not in ALL]
    if unknown:
        print(f"metrics.py: {', '.join(unknown)}: not in {HEADER.name} (known: {', '.join(ALL)})",
              file=sys.stderr)
        return 2
    print(",".join(ALL[a] for a in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
