#!/usr/bin/env python3
"""Tests of scripts/compare-runs.py on results documents written here (no GPU, no build)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "compare-runs.py"
spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
compare_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_runs)


def doc(medians):
    recs = [{"kernel": k, "dtype": "fp32", "M": m, "N": n, "status": "ok", "time": {"median_s": t}}
            for (k, m, n), t in medians.items()]
    recs.append({"kernel": "fused", "dtype": "fp32", "M": 1, "N": 65536, "status": "skipped"})
    return {"schema": "softmax-roofline/results", "schema_version": 1, "records": recs}


BIG, SMALL = (1 << 20, 128), (64, 1024)  # 2^27 elements (judged), 2^16 (not judged)


class CompareRuns(unittest.TestCase):
    def test_within_and_outside(self):
        a = doc({("fused", *BIG): 1.00e-3, ("online", *BIG): 2.0e-3, ("fused", *SMALL): 1e-5})
        b = doc({("fused", *BIG): 1.01e-3, ("online", *BIG): 2.1e-3, ("fused", *SMALL): 2e-5})
        rows, failing = compare_runs.compare(a, b, 1 << 24, 2.0)
        verdicts = {(r[0], r[3]): r[-1] for r in rows}
        self.assertEqual(verdicts[("fused", BIG[1])], "within")      # +1%
        self.assertEqual(verdicts[("online", BIG[1])], "OUTSIDE")    # +5%
        self.assertEqual(verdicts[("fused", SMALL[1])], "not judged")  # +100%, but small
        self.assertEqual(failing, 1)

    def test_pct_of_copy_in_points_one_kernel(self):
        a = doc({("softmax", *BIG): 1e-3, ("fused", *BIG): 1e-3})
        b = doc({("softmax", *BIG): 1e-3, ("fused", *BIG): 1e-3})
        for d, pcts in ((a, (97.0, 50.0)), (b, (98.5, 40.0))):
            for r in d["records"]:
                if r["status"] == "ok":
                    r["pct_of_copy"] = pcts[0] if r["kernel"] == "softmax" else pcts[1]
        rows, failing = compare_runs.compare(a, b, 1 << 24, 2.0, pct=True, kernel="softmax")
        self.assertEqual(len(rows), 1)                    # fused left out
        self.assertAlmostEqual(rows[0][-2], 1.5)          # points, not percent of A
        self.assertEqual((rows[0][-1], failing), ("within", 0))
        rows, failing = compare_runs.compare(a, b, 1 << 24, 2.0, pct=True)
        self.assertEqual(failing, 1)                      # fused fell 10 points

    def test_exit_codes(self):
        with tempfile.TemporaryDirectory() as d:
            pa, pb, pc = (pathlib.Path(d) / f"{x}.json" for x in "abc")
            pa.write_text(json.dumps(doc({("fused", *BIG): 1.0e-3})))
            pb.write_text(json.dumps(doc({("fused", *BIG): 1.005e-3})))
            pc.write_text(json.dumps({"schema": "something else"}))
            run = lambda *a: subprocess.run([sys.executable, str(SCRIPT), *a], capture_output=True, text=True)
            ok = run(str(pa), str(pb))
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertIn("1 of 1 judged shapes within 2%", ok.stdout)
            self.assertEqual(run(str(pa), str(pb), "--tolerance", "0.1").returncode, 1)
            bad = run(str(pa), str(pc))
            self.assertEqual(bad.returncode, 2)
            self.assertIn("not a softmax-roofline results document", bad.stderr)


if __name__ == "__main__":
    unittest.main()
