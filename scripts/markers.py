"""Generated tables in hand-written Markdown: the text between a begin and an end marker is the
generator's, the rest the author's. Used by plan-table.py, tables.py --cards and quack-table.py.
emit() writes a generated table whole, to --out or stdout (tables.py, compare-runs.py,
counter-table.py)."""
import pathlib
import sys


def emit(text, out=None):
    """The generated text to the file `out`, or to stdout when out is None."""
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def replace_between(path, begin, end, text, tool, kind):
    """Replaces what stands between begin and end in the file at path with text (the markers stay).
    Exits 2 with one line "TOOL: FILE: no KIND markers (...)" when either is missing, or naming
    why the file cannot be read, writing nothing."""
    path = pathlib.Path(path)
    try:
        doc = path.read_text()
    except OSError as e:
        print(f"{tool}: {path}: {e.strerror or e}", file=sys.stderr)
        sys.exit(2)
    if begin not in doc or end not in doc:
        print(f"{tool}: {path}: no {kind} markers ({begin} ... {end})", file=sys.stderr)
        sys.exit(2)
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(head + begin + "\n" + text + "\n" + end + tail)
