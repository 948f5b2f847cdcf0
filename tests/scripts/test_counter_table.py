#!/usr/bin/env python3
"""Tests of scripts/counter-table.py on documents written here (no GPU, no build)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "counter-table.py"
spec = importlib.util.spec_from_file_location("counter_table", SCRIPT)
counter_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(counter_table)


def run(records):
    return {"schema": "softmax-roofline/results", "records": records,
            "device": {"name": "NVIDIA H100 80GB HBM3"}, "ceilings": {"dram_GBps": 3062.0}}


def rec(kernel, m, n, counters, status="ok", pct=99.0):
    return {"kernel": kernel, "dtype": "bf16", "M": m, "N": n, "status": status,
            "pct_of_copy": pct, "counters": counters}


class CounterTable(unittest.TestCase):
    def rows(self, text):
        return [[c.strip() for c in l.strip("|").split("|")]
                for l in text.splitlines() if l.startswith("| bf16")]

    def test_each_counter_per_element_in_the_runs_order(self):
        doc = run([rec("softmax", 4, 100, {"a": 1600.0, "b": 40.0}, pct=83.8),
                   rec("torch.softmax", 4, 100, {"a": 9.0}),           # another kernel
                   rec("softmax", 2, 128, {"a": 1024.0, "b": 0.0}, status="failed"),  # unverified
                   rec("softmax", 2, 128, {"b": 2.56, "a": 1024.0, "why": "text"}, pct=99.9)])
        rows = self.rows(counter_table.table(doc, "r.json", "softmax", None))
        self.assertEqual(rows, [["bf16", "100", "4", "83.8%", "4", "0.1"],
                                ["bf16", "128", "2", "99.9%", "4", "0.01"]])

    def test_metrics_picked_and_a_missing_one_is_a_dash(self):
        doc = run([rec("softmax", 4, 100, {"a": 1600.0, "b": 40.0})])
        text = counter_table.table(doc, "r.json", "softmax", ["b", "c"])
        self.assertIn("| `b` | `c` |", text)
        self.assertEqual(self.rows(text), [["bf16", "100", "4", "99.0%", "0.1", "-"]])
        self.assertIn("NVIDIA H100 80GB HBM3, copy ceiling 3062 GB/s", text)

    def test_bad_input_is_one_line_and_a_nonzero_exit(self):
        with tempfile.TemporaryDirectory() as d:
            bad = pathlib.Path(d) / "bad.json"
            bad.write_text("{")
            empty = pathlib.Path(d) / "empty.json"
            empty.write_text(json.dumps(run([rec("softmax", 1, 1, {})])))
            for path, words in [(bad, "not JSON"), (pathlib.Path(d) / "none.json", "cannot read"),
                                (empty, "no verified record")]:
                p = subprocess.run([sys.executable, str(SCRIPT), str(path)],
                                   capture_output=True, text=True)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(words, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
