#!/usr/bin/env python3
"""Every number the course lab (docs/lab/) quotes, generated from committed results -- never typed.

    scripts/lab-numbers.py            rewrite the marked spans in docs/lab/*.md and docs/lab/answers/*.md
    scripts/lab-numbers.py --check    change nothing; exit 1 if a span is stale, pending or not measured
    scripts/lab-numbers.py --list     print every span's key and its generated value
    scripts/lab-numbers.py FILE.md    only these files

A number in the lab text is a span

    <!-- num:SOURCE/SUBJECT/QUANTITY -->0.375<!-- /num -->

whose text between the two comments this script owns (the comments are invisible in rendered
Markdown). SOURCE names a committed document:

    lab-02-unfused          results/h200/lab-02-unfused/results.json   (softmax-bench run, on the H200)
    h100:lab-06-fast        results/h100/lab-06-fast/results.json      (the same on another card)
    model:lab-01-roofline   results/model/lab-01-roofline/model.json   (softmax-bench model, no GPU)

SUBJECT picks what in it:

    fused@16384x4096        the record (or model point) of kernel `fused` at M = 16384, N = 4096
    unfused:fused@16384x4096  the two records' ratio (QUANTITY must be a ratio: dram_ratio, ...)
    ceilings                the run's ceilings
    claim:traffic_ratio     a claim (QUANTITY verdict or summary); claim:ID@MxN one of its rows,
    claim:memory_bound:fused@MxN  (QUANTITY a column of the row, e.g. measured_ratio, second_read)

QUANTITY is one of the names in RECORD, RATIO, CEILING below, optionally with a Python format
spec after a bar: `fused@16384x4096/GBps|.0f`. Where the source document is missing the span reads
"(run pending)" (or "(model pending)"); where the document is there but the value is not (counters
not read, a skipped record) it reads "(not measured)". Both make --check fail, as does a span whose
text differs from what the documents give. A malformed span, an unknown source or quantity, or a
record that does not exist in a document that does is an error (exit 2), with file and line.

The documents are produced by the commands in docs/lab/README.md ("For the instructor"); the
schema is docs/results-schema.md. This script reads JSON only.
"""
import argparse
import json
import math
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import metrics  # noqa: E402  (scripts/metrics.py: the names of src/core/metrics.hpp)

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "results" / "h200"
MODEL_DIR = ROOT / "results" / "model"
LAB_DIR = ROOT / "docs" / "lab"

SPAN = re.compile(r"<!-- num:(?P<key>[^>]*?) -->(?P<text>.*?)<!-- /num -->", re.S)
RUN_PENDING = "(run pending)"
MODEL_PENDING = "(model pending)"
NOT_MEASURED = "(not measured)"


class SpanError(Exception):
    """A span that can never be filled: a mistake in the lab text (exit 2)."""


class Missing(Exception):
    """A value the documents do not hold (yet)."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text


# ---- documents -----------------------------------------------------------------------------

class Source:
    """One results.json (kind 'run') or model.json (kind 'model'), loaded on first use."""

    def __init__(self, name, results_dir, model_dir):
        self.name = name
        prefix, _, stem = name.rpartition(":")
        if not (re.fullmatch(r"lab-[0-9]{2}-[a-z0-9-]+", stem)
                and (prefix == "" or re.fullmatch(r"[a-z][a-z0-9]*", prefix))):
            raise SpanError(f"source '{name}': expected lab-NN-name, CARD:lab-NN-name or "
                            "model:lab-NN-name")
        if prefix == "model":
            self.kind, self.path = "model", model_dir / stem / "model.json"
        else:
            # CARD:lab-NN-name: the run of that card's folder beside the default one (h100:...).
            folder = results_dir.parent / prefix if prefix else results_dir
            self.kind, self.path = "run", folder / stem / "results.json"
        self._doc = None

    def pending(self):
        return Missing(MODEL_PENDING if self.kind == "model" else RUN_PENDING)

    def doc(self):
        if self._doc is None:
            if not self.path.is_file():
                raise self.pending()
            with open(self.path) as f:
                self._doc = json.load(f)
            want = "softmax-roofline/model" if self.kind == "model" else "softmax-roofline/results"
            if self._doc.get("schema") != want:
                raise SpanError(f"{rel(self.path)}: schema is not {want}")
        return self._doc

    def records(self):
        d = self.doc()
        return d.get("points", []) if self.kind == "model" else d.get("records", [])

    def record(self, kernel, m, n):
        found = [r for r in self.records()
                 if r.get("kernel") == kernel and r.get("M") == m and r.get("N") == n
                 and r.get("dtype", "fp32") == "fp32"]
        if not found:
            raise SpanError(f"{rel(self.path)}: no record of kernel '{kernel}' at "
                            f"M = {m}, N = {n} (fp32)")
        return found[0]


# ---- quantities ----------------------------------------------------------------------------

def rel(path):
    try:
        return path.relative_to(ROOT)
    except ValueError:
        return path


def need(value):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        raise Missing(NOT_MEASURED)
    return value


def elements(r):
    return r["M"] * r["N"]


def x_bytes(r):
    return elements(r) * (2 if r.get("dtype") in ("bf16", "fp16") else 4)


def measured(r):
    """The record must have run: model points and skipped/failed records have no measurements."""
    if r.get("status", "ok") != "ok":
        raise Missing(NOT_MEASURED)
    return r


def counter(r, key):
    c = measured(r).get("counters") or {}
    return need(c.get(key))


def median(r):
    return need((measured(r).get("time") or {}).get("median_s"))


def model(r, key):
    return need((r.get("model") or {}).get(key))


def run_ceilings(r, src):
    return src.doc().get("ceilings") or {}


# name -> (function(record, source), default format). Bytes per element are per M x N element.
RECORD = {
    # measured: time and bandwidth (the timing pass)
    "time_us": (lambda r, s: median(r) * 1e6, ".1f"),
    "time_cv_pct": (lambda r, s: need((measured(r).get("time") or {}).get("cv")) * 100, ".1f"),
    "GBps": (lambda r, s: need(measured(r).get("effective_GBps")), ".0f"),
    "pct_of_copy": (lambda r, s: need(measured(r).get("pct_of_copy")), ".0f"),
    "model_GBps_implied": (lambda r, s: need(measured(r).get("model_GBps")), ".0f"),
    "GFLOPs": (lambda r, s: 3 * elements(r) / median(r) / 1e9, ".0f"),
    "pct_of_fp32": (lambda r, s: 3 * elements(r) / median(r) / 1e9
                    / need(run_ceilings(r, s).get("fp32_GFLOPs")) * 100, ".2f"),
    "status": (lambda r, s: r.get("status", "ok"), ""),
    "reason": (lambda r, s: r.get("reason") or "", ""),
    "max_rel_err": (lambda r, s: need((measured(r).get("verify") or {}).get("max_rel_err")), ".1e"),
    # measured: counters (the profiling pass)
    "dram_read_MB": (lambda r, s: counter(r, metrics.DRAM_READ) / 1e6, ".1f"),
    "dram_write_MB": (lambda r, s: counter(r, metrics.DRAM_WRITE) / 1e6, ".1f"),
    "dram_MB": (lambda r, s: counter(r, "dram_bytes") / 1e6, ".1f"),
    "dram_read_B_per_elem": (lambda r, s: counter(r, metrics.DRAM_READ) / elements(r), ".2f"),
    "dram_write_B_per_elem": (lambda r, s: counter(r, metrics.DRAM_WRITE) / elements(r), ".2f"),
    "dram_B_per_elem": (lambda r, s: counter(r, "dram_bytes") / elements(r), ".2f"),
    "dram_passes": (lambda r, s: counter(r, "dram_bytes") / x_bytes(r), ".2f"),
    "dram_read_passes": (lambda r, s: counter(r, metrics.DRAM_READ) / x_bytes(r), ".2f"),
    "dram_write_passes": (lambda r, s: counter(r, metrics.DRAM_WRITE) / x_bytes(r), ".2f"),
    "dram_GBps": (lambda r, s: counter(r, "dram_bytes") / median(r) / 1e9, ".0f"),
    "dram_pct": (lambda r, s: counter(r, "dram_bytes") / median(r) / 1e9
                 / need(run_ceilings(r, s).get("dram_GBps")) * 100, ".0f"),
    "l1_l2_B_per_elem": (lambda r, s: counter(r, "l1_l2_bytes") / elements(r), ".2f"),
    "l1_l2_GBps": (lambda r, s: counter(r, "l1_l2_bytes") / median(r) / 1e9, ".0f"),
    "l1_B_per_elem": (lambda r, s: counter(r, metrics.L1_BYTES) / elements(r), ".2f"),
    "intensity": (lambda r, s: 3 * elements(r) / counter(r, "dram_bytes"), ".3f"),
    "executed_intensity": (lambda r, s: counter(r, "flops_executed") / counter(r, "dram_bytes"), ".3f"),
    "flops_per_elem": (lambda r, s: counter(r, "flops_executed") / elements(r), ".2f"),
    "fadd_per_elem": (lambda r, s: counter(r, metrics.FADD_THREAD_INST)
                      / elements(r), ".2f"),
    "fmul_per_elem": (lambda r, s: counter(r, metrics.FMUL_THREAD_INST)
                      / elements(r), ".2f"),
    "ffma_per_elem": (lambda r, s: counter(r, metrics.FFMA_THREAD_INST)
                      / elements(r), ".2f"),
    "xu_per_elem": (lambda r, s: counter(r, "xu_thread_inst") / elements(r), ".2f"),
    # the analytic model of the record (a results.json record: with the run's measured ceilings;
    # a model.json point: with the ceilings `softmax-bench model` was given, the datasheet's by default)
    "model_dram_MB": (lambda r, s: model(r, "dram_bytes") / 1e6, ".1f"),
    "model_dram_read_MB": (lambda r, s: model(r, "dram_read_bytes") / 1e6, ".1f"),
    "model_dram_write_MB": (lambda r, s: model(r, "dram_write_bytes") / 1e6, ".1f"),
    "model_dram_B_per_elem": (lambda r, s: model(r, "dram_bytes") / elements(r), ".2f"),
    "model_passes": (lambda r, s: model(r, "passes"), ".2f"),
    "model_read_passes": (lambda r, s: model(r, "dram_read_bytes") / x_bytes(r), ".2f"),
    "model_write_passes": (lambda r, s: model(r, "dram_write_bytes") / x_bytes(r), ".2f"),
    # how many times the ridge point (the ceilings' FP32 / DRAM) exceeds the model's intensity
    "model_left_of_ridge": (lambda r, s: need(run_ceilings(r, s).get("fp32_GFLOPs"))
                            / need(run_ceilings(r, s).get("dram_GBps")) / model(r, "intensity"), ".0f"),
    "pct_of_bound": (lambda r, s: model(r, "bound_time_s") / median(r) * 100, ".0f"),
    "model_GFLOP": (lambda r, s: model(r, "flops") / 1e9, ".3f"),
    "model_intensity": (lambda r, s: model(r, "intensity"), ".3f"),
    "model_time_us": (lambda r, s: model(r, "bound_time_s") * 1e6, ".1f"),
    "model_GBps": (lambda r, s: model(r, "bound_GBps"), ".0f"),
    "model_bound": (lambda r, s: model(r, "bound"), ""),
    "model_note": (lambda r, s: model(r, "note"), ""),
    "x_MB": (lambda r, s: x_bytes(r) / 1e6, ".1f"),
    "x_MiB": (lambda r, s: x_bytes(r) / 2**20, ".0f"),
    "x_over_L2": (lambda r, s: x_bytes(r) / need(run_ceilings(r, s).get("l2_bytes")), ".2f"),
}

# name -> (function(record a, record b, source), format): a over b.
RATIO = {
    "dram_ratio": (lambda a, b, s: counter(a, "dram_bytes") / counter(b, "dram_bytes"), ".2f"),
    "dram_read_ratio": (lambda a, b, s: counter(a, metrics.DRAM_READ)
                        / counter(b, metrics.DRAM_READ), ".2f"),
    "dram_write_ratio": (lambda a, b, s: counter(a, metrics.DRAM_WRITE)
                         / counter(b, metrics.DRAM_WRITE), ".2f"),
    "time_ratio": (lambda a, b, s: median(a) / median(b), ".2f"),
    "speedup": (lambda a, b, s: median(b) / median(a), ".2f"),  # a is this many times faster than b
    "model_ratio": (lambda a, b, s: model(a, "dram_bytes") / model(b, "dram_bytes"), ".2f"),
    "model_time_ratio": (lambda a, b, s: model(a, "bound_time_s") / model(b, "bound_time_s"), ".2f"),
}

# name -> (function(ceilings, source), format)
CEILING = {
    "dram_GBps": (lambda c, s: need(c.get("dram_GBps")), ".0f"),
    "dram_TBps": (lambda c, s: need(c.get("dram_GBps")) / 1e3, ".2f"),
    "peak_dram_GBps": (lambda c, s: need(c.get("peak_dram_GBps")), ".0f"),
    "l2_GBps": (lambda c, s: need(c.get("l2_GBps")), ".0f"),
    "fp32_GFLOPs": (lambda c, s: need(c.get("fp32_GFLOPs")), ".0f"),
    "fp32_TFLOPs": (lambda c, s: need(c.get("fp32_GFLOPs")) / 1e3, ".1f"),
    "ridge": (lambda c, s: need(c.get("fp32_GFLOPs")) / need(c.get("dram_GBps")), ".1f"),
    # FLOP per fp32 element a kernel that moves 8 bytes per element may execute and stay memory-bound
    "ridge_flop_per_8B": (lambda c, s: 8 * need(c.get("fp32_GFLOPs")) / need(c.get("dram_GBps")), ".0f"),
    "l2_MiB": (lambda c, s: need(c.get("l2_bytes")) / 2**20, ".0f"),
    "l2_MB": (lambda c, s: need(c.get("l2_bytes")) / 1e6, ".1f"),
    "sm_count": (lambda c, s: need(c.get("sm_count")), "d"),
    "source": (lambda c, s: need(c.get("source")), ""),
    "device": (lambda c, s: need(c.get("device")), ""),
}

SHAPE = re.compile(r"(?P<subject>[^@]+)@(?P<m>[0-9]+)x(?P<n>[0-9]+)")


def fmt(value, spec):
    if isinstance(value, str):
        return value
    if spec == "d":
        return f"{int(round(value))}"
    return format(value, spec or "g")


class Lab:
    def __init__(self, results_dir=RESULTS_DIR, model_dir=MODEL_DIR):
        self.results_dir, self.model_dir = results_dir, model_dir
        self.sources = {}

    def source(self, name):
        if name not in self.sources:
            self.sources[name] = Source(name, self.results_dir, self.model_dir)
        return self.sources[name]

    def value(self, key):
        """The generated text of a span key; raises Missing or SpanError."""
        spec = None
        if "|" in key:
            key, spec = key.split("|", 1)
        parts = key.split("/")
        if len(parts) != 3:
            raise SpanError(f"key '{key}': expected SOURCE/SUBJECT/QUANTITY")
        src_name, subject, quantity = parts
        src = self.source(src_name)

        if subject == "ceilings":
            if quantity not in CEILING:
                raise SpanError(f"unknown ceiling quantity '{quantity}' (known: {', '.join(CEILING)})")
            f, default = CEILING[quantity]
            return fmt(f(src.doc().get("ceilings") or {}, src), spec if spec is not None else default)

        if subject.startswith("claim:"):
            return fmt(self.claim(src, subject[len("claim:"):], quantity), spec or ".3g")

        shape = SHAPE.fullmatch(subject)
        if not shape:
            raise SpanError(f"subject '{subject}': expected KERNEL@MxN, KA:KB@MxN, ceilings or claim:ID")
        m, n = int(shape["m"]), int(shape["n"])
        names = shape["subject"].split(":")
        if len(names) == 2:
            if quantity not in RATIO:
                raise SpanError(f"unknown ratio quantity '{quantity}' (known: {', '.join(RATIO)})")
            src.doc()
            a, b = (src.record(k, m, n) for k in names)
            f, default = RATIO[quantity]
            return fmt(f(a, b, src), spec if spec is not None else default)
        if len(names) != 1:
            raise SpanError(f"subject '{subject}': one kernel, or two separated by ':'")
        if quantity not in RECORD:
            raise SpanError(f"unknown quantity '{quantity}' (known: {', '.join(RECORD)})")
        src.doc()
        f, default = RECORD[quantity]
        return fmt(f(src.record(names[0], m, n), src), spec if spec is not None else default)

    def claim(self, src, what, quantity):
        if src.kind != "run":
            raise SpanError("claims exist only in results documents")
        shape = SHAPE.fullmatch(what)
        claim_id, m, n = (shape["subject"], int(shape["m"]), int(shape["n"])) if shape else (what, None, None)
        kernel = None
        if ":" in claim_id:
            claim_id, kernel = claim_id.split(":", 1)
        claims = src.doc().get("claims") or []
        found = [c for c in claims if c.get("id") == claim_id]
        if not found:
            raise Missing(NOT_MEASURED)
        c = found[0]
        if m is None:
            if quantity not in ("verdict", "summary", "title", "statement"):
                raise SpanError(f"claim quantity '{quantity}': verdict, summary, title or statement "
                                f"(a column needs a row: claim:{claim_id}@MxN)")
            return need(c.get(quantity))
        rows = [r for r in c.get("rows", []) if r.get("M") == m and r.get("N") == n
                and (kernel is None or r.get("kernel") == kernel)]
        if not rows:
            raise Missing(NOT_MEASURED)
        return need(rows[0].get(quantity))


# ---- the files -----------------------------------------------------------------------------

def lab_files():
    return sorted(LAB_DIR.glob("*.md")) + sorted((LAB_DIR / "answers").glob("*.md"))


def process(path, lab, listing):
    """Returns (new text, problems) where problems are (line, key, what) for --check."""
    text = path.read_text()
    problems = []
    out, last = [], 0
    for mt in SPAN.finditer(text):
        line = text.count("\n", 0, mt.start()) + 1
        key = mt["key"].strip()
        try:
            new = lab.value(key)
            if new != mt["text"]:
                problems.append((line, key, f"stale: the text says '{mt['text']}', the documents '{new}'"))
        except Missing as e:
            new = e.text
            problems.append((line, key, new))
        except SpanError as e:
            raise SpanError(f"{rel(path)}:{line}: {e}") from None
        if listing:
            print(f"{rel(path)}:{line}: {key} = {new}")
        out.append(text[last:mt.start()])
        out.append(f"<!-- num:{mt['key']} -->{new}<!-- /num -->")
        last = mt.end()
    out.append(text[last:])
    # An opening comment without its closing one would silently never be filled.
    opened = text.count("<!-- num:")
    if opened != len(SPAN.findall(text)):
        raise SpanError(f"{rel(path)}: {opened} '<!-- num:' openings but "
                        f"{len(SPAN.findall(text))} complete spans (a missing '<!-- /num -->'?)")
    return "".join(out), problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=pathlib.Path,
                    help="lab pages (default: docs/lab/*.md and docs/lab/answers/*.md)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 when a span is stale, pending or not measured")
    ap.add_argument("--list", action="store_true", help="print every span with its value")
    ap.add_argument("--results", type=pathlib.Path, default=RESULTS_DIR,
                    help="where the run sources live (default: results/h200)")
    ap.add_argument("--models", type=pathlib.Path, default=MODEL_DIR,
                    help="where the model sources live (default: results/model)")
    args = ap.parse_args(argv)

    files = [f.resolve() for f in args.files] or lab_files()
    lab = Lab(args.results.resolve(), args.models.resolve())
    spans = changed = 0
    all_problems = []
    try:
        for path in files:
            if not path.is_file():
                raise SpanError(f"{path}: no such file")
            new, problems = process(path, lab, args.list)
            spans += len(SPAN.findall(new))
            shown = rel(path)
            all_problems += [(shown, *p) for p in problems]
            if new != path.read_text():
                changed += 1
                if not args.check:
                    path.write_text(new)
    except SpanError as e:
        print(f"lab-numbers.py: {e}", file=sys.stderr)
        return 2
    except (OSError, json.JSONDecodeError) as e:
        print(f"lab-numbers.py: {e}", file=sys.stderr)
        return 2

    stale = [p for p in all_problems if p[3].startswith("stale")]
    pending = [p for p in all_problems if not p[3].startswith("stale")]
    for where, line, key, what in stale:
        print(f"{where}:{line}: {key}: {what}")
    # Pending spans grouped by source: one line per missing document, not one per span.
    by_source = {}
    for where, line, key, what in pending:
        src = lab.source(key.split("/", 1)[0])
        by_source.setdefault((src.name, what, rel(src.path)), []).append(f"{where}:{line}")
    for (name, what, path), places in sorted(by_source.items()):
        why = "missing" if not path_exists(path) else "holds no value for them"
        print(f"{what}: {len(places)} spans from {name} ({path} {why}), first at {places[0]}")
    if args.check:
        print(f"lab-numbers.py: {spans} spans in {len(files)} files; {len(stale)} stale, "
              f"{len(pending)} pending or not measured" + ("" if all_problems else ": all generated"))
        return 1 if all_problems else 0
    print(f"lab-numbers.py: {spans} spans in {len(files)} files, {changed} files rewritten, "
          f"{len(pending)} spans pending or not measured")
    return 0


def path_exists(path):
    return (ROOT / path).is_file() if not path.is_absolute() else path.is_file()


if __name__ == "__main__":
    sys.exit(main())
