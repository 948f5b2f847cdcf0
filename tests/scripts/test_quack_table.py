#!/usr/bin/env python3
"""Tests of scripts/quack-table.py on documents written here (no GPU, no build)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "quack-table.py"
spec = importlib.util.spec_from_file_location("quack_table", SCRIPT)
quack_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(quack_table)

PUBLISHED = {"source": "a chart", "points": [{"M": 32768, "N": 1024, "GBps": 2630},
                                             {"M": 8192, "N": 262144, "GBps": 3012}]}


def run(records):
    return {"schema": "softmax-roofline/results", "records": records,
            "device": {"name": "NVIDIA H100 80GB HBM3"}, "ceilings": {"dram_GBps": 3040.0}}


def rec(kernel, m, n, gbps, status="ok", dtype="bf16"):
    return {"kernel": kernel, "dtype": dtype, "M": m, "N": n, "status": status, "effective_GBps": gbps}


class QuackTable(unittest.TestCase):
    def rows(self, text):
        return {l.split("|")[1].strip(): [c.strip() for c in l.strip("|").split("|")]
                for l in text.splitlines() if l.startswith("| ") and l.split("|")[1].strip().isdigit()}

    def test_published_beside_measured_ratio_and_peers(self):
        doc = run([rec("softmax", 32768, 1024, 2893.0), rec("torch.softmax", 32768, 1024, 2500.0),
                   rec("softmax", 32768, 1024, 1.0, dtype="fp32"),  # another dtype: not this table's
                   rec("softmax", 8192, 262144, 0, status="failed")])
        text = quack_table.table(doc, "r.json", PUBLISHED)
        self.assertIn("published", text)
        self.assertIn("NVIDIA H100 80GB HBM3", text)
        r = self.rows(text)
        self.assertEqual(r["1024"], ["1024", "32768", "2630", "2893", "1.100x", "2500", "-"])
        # A failed record shows its status, never a number or a ratio.
        self.assertEqual(r["262144"][3:5], ["failed", "-"])

    def test_into_and_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            res, pub, md = (pathlib.Path(d) / x for x in ("r.json", "p.json", "notes.md"))
            res.write_text(json.dumps(run([rec("softmax", 32768, 1024, 2600.0)])))
            pub.write_text(json.dumps(PUBLISHED))
            md.write_text(f"a\n{quack_table.BEGIN}\nold\n{quack_table.END}\nb\n")
            cmd = [sys.executable, str(SCRIPT), str(res), "--published", str(pub)]
            out = subprocess.run(cmd + ["--into", str(md)], capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertNotIn("old", md.read_text())
            self.assertIn("| 1024 | 32768 | 2630 | 2600 | 0.989x |", md.read_text())
            md.write_text("no markers\n")
            out = subprocess.run(cmd + ["--into", str(md)], capture_output=True, text=True)
            self.assertEqual(out.returncode, 2)
            self.assertEqual(md.read_text(), "no markers\n")
            pub.write_text(json.dumps({"points": []}))
            out = subprocess.run(cmd, capture_output=True, text=True)
            self.assertEqual(out.returncode, 2)
            self.assertIn("no points", out.stderr)


if __name__ == "__main__":
    unittest.main()
