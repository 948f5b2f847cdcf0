#!/usr/bin/env python3
"""Tests of scripts/ncu-parity's verdicts and table (no GPU, no ncu)."""
import importlib.machinery
import importlib.util
import pathlib
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ncu-parity"
loader = importlib.machinery.SourceFileLoader("ncu_parity", str(SCRIPT))
spec = importlib.util.spec_from_loader("ncu_parity", loader)
parity = importlib.util.module_from_spec(spec)
loader.exec_module(parity)


def row(regime, read_pct, write_pct):
    return {"label": "softmax block_row", "dtype": "fp32", "M": 8, "N": 4096, "regime": regime,
            "x_over_L2": 4.5 if regime == "far above L2" else 0.25, "read_ours": 4e6, "read_ncu": 4e6,
            "write_ours": 4e6, "write_ncu": 4e6, "read_pct": read_pct, "write_pct": write_pct}


class Verdicts(unittest.TestCase):
    def test_within_one_percent_anywhere(self):
        self.assertEqual(parity.judge(row("far above L2", 0.4, -0.9), 0), "within 1%")
        self.assertEqual(parity.judge(row("inside L2", 0.1, 0.2), 0), "within 1%")

    def test_far_above_differs(self):
        self.assertTrue(parity.judge(row("far above L2", 1.5, 0.0), 0).startswith("differs by more than 1% (1.50%)"))

    def test_inside_l2_not_decidable_with_the_reason(self):
        v = parity.judge(row("inside L2", 3.0, 0.0), 40e3)
        self.assertTrue(v.startswith("not decidable here"))
        self.assertIn("0.5% of the work's bytes", v)

    def test_missing_metric(self):
        r = row("far above L2", 0.0, 0.0)
        del r["write_pct"]
        self.assertTrue(parity.judge(r, 0).startswith("not measured"))

    def test_table_has_a_row_per_case(self):
        rows = [dict(row("far above L2", 0.1, 0.2), verdict="within 1%"),
                dict(row("inside L2", 3.0, 0.0), verdict="not decidable here: ...")]
        t = parity.table(rows, 50 * 2**20, "NVIDIA H100")
        self.assertEqual(t.count("\n| softmax block_row |"), 2)
        self.assertIn("+0.100%", t)
        self.assertIn("L2 50 MiB", t)


if __name__ == "__main__":
    unittest.main()
