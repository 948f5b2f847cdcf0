#!/usr/bin/env python3
"""Tests of scripts/ncu-stalls' argument checks (no GPU, no ncu, no build needed)."""
import pathlib
import subprocess
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "ncu-stalls"


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30)


class NcuStallsArguments(unittest.TestCase):
    def test_odd_or_missing_shapes_are_refused(self):
        for args in ([], ["5"], ["5", "6", "7"]):
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("expected M N pairs", r.stdout)

    def test_unknown_dtype_is_refused(self):
        r = run("-t", "fp8", "1", "2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("-t fp8: not fp32, bf16 or fp16", r.stdout)

    def test_a_dtype_reaches_the_probe_check(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("-b", d, "-t", "bf16", "1", "2")
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"no {d}/src/harness/smr-counter-probe", r.stdout)

    def test_a_plan_reaches_the_probe_check(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("-b", d, "-p", "block_row T=128 K=4 cap=2048", "65536", "2048")
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"no {d}/src/harness/smr-counter-probe", r.stdout)

    def test_a_plan_needs_its_name(self):
        r = run("-p")
        self.assertEqual(r.returncode, 2)
        self.assertIn("ncu-stalls [-b BUILD_DIR]", r.stdout)  # the usage

    def test_missing_probe_names_the_build(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("-b", d, "1", "2")
            self.assertEqual(r.returncode, 1)
            self.assertIn(f"no {d}/src/harness/smr-counter-probe", r.stdout)


if __name__ == "__main__":
    unittest.main()
