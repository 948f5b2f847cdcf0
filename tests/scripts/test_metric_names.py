#!/usr/bin/env python3
"""The hardware metric names are spelled in one place, src/core/metrics.hpp: the C++ includes it,
the scripts read it through scripts/metrics.py. Fails when a source or script spells a metric of the
header anywhere else, or spells a metric-like string the header does not name."""
import importlib.util
import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ROOT / "src" / "core" / "metrics.hpp"
spec = importlib.util.spec_from_file_location("metrics", ROOT / "scripts" / "metrics.py")
metrics = importlib.util.module_from_spec(spec)
spec.loader.exec_module(metrics)

# Where code lives (tests and docs hold metric names as data and prose: not searched).
CODE_DIRS = ["src", "scripts", "experiments", "fuzz", "web", ".ci"]
SKIP_DIRS = {"node_modules", "__pycache__", "build", "test", "corpus"}  # web/test, fuzz/corpus: data
CODE_SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".py", ".mjs", ".js", ".sh", ".txt", ".cmake",
                 ".yaml", ".yml", ""}
# A metric: <unit>__<counter>[.<rollup>...], as CUPTI and Nsight Compute spell them.
METRIC_LIKE = re.compile(r"\b[a-z][a-z0-9]*__[a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*")


def code_files():
    for top in CODE_DIRS:
        base = ROOT / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if any(part in SKIP_DIRS for part in path.relative_to(ROOT).parts):
                continue
            if path.is_file() and path.suffix in CODE_SUFFIXES and path != HEADER:
                try:
                    yield path, path.read_text()
                except UnicodeDecodeError:
                    continue


def spelled(text, needle):
    return [n + 1 for n, line in enumerate(text.splitlines()) if needle in line]


class MetricNames(unittest.TestCase):
    def test_the_header_names_metrics_once(self):
        values = list(metrics.ALL.values())
        self.assertGreaterEqual(len(values), 9)
        self.assertEqual(len(values), len(set(values)), "a metric named twice in metrics.hpp")
        for name, value in metrics.ALL.items():
            self.assertRegex(value.removeprefix("regex:"), r"^[a-z][a-z0-9]*__", name)
            self.assertEqual(getattr(metrics, name), value)

    def test_the_harness_collects_the_header_metrics(self):
        text = (ROOT / "src" / "harness" / "counters_attribution.cpp").read_text()
        body = text[text.index("default_counter_metrics() {"):]
        body = body[:body.index("}")]
        self.assertEqual(re.findall(r"metric::k(\w+)", body)[:9],
                         [re.sub(r"_", "", n.title()) for n in list(metrics.ALL)[:9]])

    def test_no_code_spells_a_header_metric(self):
        found = []
        for path, text in code_files():
            for value in metrics.ALL.values():
                for line in spelled(text, value.removeprefix("regex:")):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {value}")
        self.assertEqual(found, [], "spelled outside src/core/metrics.hpp: use its constant "
                                    "(C++: smr::metric::k..., scripts: metrics.NAME)")

    def test_no_code_spells_a_metric_the_header_lacks(self):
        named = {v.removeprefix("regex:") for v in metrics.ALL.values()}
        found = []
        for path, text in code_files():
            for n, line in enumerate(text.splitlines(), 1):
                for m in METRIC_LIKE.finditer(line):
                    if m.group(0) not in named:  # (the test above: spelled twice)
                        found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)}")
        self.assertEqual(found, [], "a metric outside src/core/metrics.hpp: name it there")


if __name__ == "__main__":
    unittest.main()
