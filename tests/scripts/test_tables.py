#!/usr/bin/env python3
"""Tests of scripts/tables.py on a results document written here (no GPU, no build)."""
import importlib.util
import math
import pathlib
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "tables.py"
spec = importlib.util.spec_from_file_location("tables", SCRIPT)
tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tables)


def rec(kernel, n, median_s, pct, status="ok"):
    return {"kernel": kernel, "dtype": "fp32", "M": (1 << 27) // n, "N": n, "status": status,
            "effective_GBps": 4000.0 * pct / 100.0, "pct_of_copy": pct,
            "time": {"median_s": median_s}}


def doc(records):
    return {"schema": "softmax-roofline/results", "schema_version": 1, "records": records,
            "ceilings": {"dram_GBps": 4000.0, "source": "measured"}}


def row(text, first_cell):
    """The cells of the speed-up table's row that starts with first_cell."""
    speedups = text[text.index("speed-up of `softmax`"):]
    lines = [l for l in speedups.splitlines() if l.startswith(f"| {first_cell} |")]
    assert len(lines) == 1, (first_cell, lines)
    return [c.strip() for c in lines[0].strip("|").split("|")]


class SpeedUps(unittest.TestCase):
    def test_geomean_and_the_copy_ceiling_bound(self):
        # softmax at 100% and 80% of copy; the peer at 50% and 80% (times in proportion).
        d = doc([rec("softmax", 1024, 1.0, 100.0), rec("softmax", 4096, 1.25, 80.0),
                 rec("triton.fused", 1024, 2.0, 50.0), rec("triton.fused", 4096, 1.25, 80.0)])
        text = tables.tables(d, "fixture.json")
        self.assertEqual(row(text, "1024")[2:], ["2.00x"])
        self.assertEqual(row(text, "4096")[2:], ["1.00x"])
        self.assertEqual(row(text, "geomean")[2:], [f"{math.sqrt(2.0):.2f}x"])
        # At the copy ceiling everywhere: 2.0x and 1.25x, geomean sqrt(2.5).
        self.assertEqual(row(text, "geomean at the copy ceiling")[2:], [f"{math.sqrt(2.5):.2f}x"])

    def test_bound_leaves_out_shapes_the_peer_or_softmax_lacks(self):
        # The peer skipped at 4096: neither mean takes that shape.
        d = doc([rec("softmax", 1024, 1.0, 100.0), rec("softmax", 4096, 1.0, 100.0),
                 rec("triton.fused", 1024, 4.0, 25.0), rec("triton.fused", 4096, 0, 0, "skipped")])
        text = tables.tables(d, "fixture.json")
        self.assertEqual(row(text, "geomean")[2:], ["4.00x"])
        self.assertEqual(row(text, "geomean at the copy ceiling")[2:], ["4.00x"])


class NoiseAndClockMarks(unittest.TestCase):
    def test_unconverged_and_fallen_records_are_marked_missing_is_not(self):
        a, b, c = rec("softmax", 1024, 1.0, 100.0), rec("softmax", 2048, 1.0, 90.0), rec("softmax", 4096, 1.0, 80.0)
        a["time"]["noise"] = {"converged": False, "value": 0.02, "target": 0.005}
        b["time"]["clocks"] = {"available": True, "fell": True}
        # c: no noise or clock fields (an older run): no mark
        text = tables.tables(doc([a, b, c]), "fixture.json")
        lines = {l.split("|")[1].strip(): l for l in text.splitlines() if l.startswith("| ")}
        self.assertIn("(100%) \\*", lines["1024"])
        self.assertIn("(90%) ↓", lines["2048"])
        self.assertNotIn("*", lines["4096"])
        self.assertNotIn("↓", lines["4096"])
        self.assertIn("did not meet its noise target", text)

    def test_no_legend_without_marks(self):
        text = tables.tables(doc([rec("softmax", 1024, 1.0, 100.0)]), "fixture.json")
        self.assertNotIn("noise target", text)


if __name__ == "__main__":
    unittest.main()
