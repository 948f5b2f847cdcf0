#!/usr/bin/env python3
"""Tests of scripts/lab-numbers.py on a small results document written here (no GPU, no build).

    python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""
import contextlib
import importlib.util
import io
import json
import pathlib
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "lab-numbers.py"
spec = importlib.util.spec_from_file_location("lab_numbers", SCRIPT)
lab_numbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab_numbers)

M, N = 1024, 4096
ELEMS = M * N


def record(kernel, dram_read, dram_write, median_s, status="ok"):
    r = {"kernel": kernel, "dtype": "fp32", "M": M, "N": N, "ld_x": N, "ld_y": N,
         "status": status, "reason": "" if status == "ok" else "N exceeds the cap",
         "model": {"dram_bytes": 8.0 * ELEMS, "dram_read_bytes": 4.0 * ELEMS,
                   "dram_write_bytes": 4.0 * ELEMS, "passes": 2.0, "flops": 3.0 * ELEMS,
                   "intensity": 0.375, "bound_time_s": 1e-5, "bound_GBps": 4000.0,
                   "bound": "memory", "note": "one read, one write"}}
    if status == "ok":
        r["time"] = {"median_s": median_s, "cv": 0.01}
        r["effective_GBps"] = 8.0 * ELEMS / median_s / 1e9
        r["pct_of_copy"] = 80.0
        r["counters"] = {"dram__bytes_read.sum": dram_read, "dram__bytes_write.sum": dram_write,
                         "dram_bytes": dram_read + dram_write,
                         "flops_executed": 6.0 * ELEMS, "xu_thread_inst": 1.125 * ELEMS}
    return r


RESULTS = {
    "schema": "softmax-roofline/results", "schema_version": 1,
    "ceilings": {"dram_GBps": 4000.0, "fp32_GFLOPs": 60000.0, "l2_bytes": 62914560,
                 "sm_count": 132, "source": "measured", "device": "NVIDIA H200"},
    "records": [record("fused", 4.0 * ELEMS, 4.0 * ELEMS, 2e-5),
                record("unfused", 12.0 * ELEMS, 8.0 * ELEMS, 5e-5),
                record("online", 0, 0, 0, status="skipped")],
    "claims": [{"id": "traffic_ratio", "verdict": "holds",
                "rows": [{"M": M, "N": N, "measured_ratio": 2.5}]}],
}


class LabNumbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        self.results = root / "results"
        (self.results / "lab-09-test").mkdir(parents=True)
        (self.results / "lab-09-test" / "results.json").write_text(json.dumps(RESULTS))
        self.models = root / "models"
        self.models.mkdir()
        self.page = root / "page.md"

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, text, *flags):
        self.page.write_text(text)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = lab_numbers.main([*flags, "--results", str(self.results),
                                   "--models", str(self.models), str(self.page)])
        return rc, self.page.read_text(), out.getvalue() + err.getvalue()

    @staticmethod
    def span(key, text="?"):
        return f"<!-- num:{key} -->{text}<!-- /num -->"

    def test_fills_record_ratio_ceiling_and_claim_values(self):
        text = " ".join(self.span(k) for k in (
            "lab-09-test/fused@1024x4096/dram_B_per_elem",
            "lab-09-test/unfused:fused@1024x4096/dram_ratio",
            "lab-09-test/unfused:fused@1024x4096/time_ratio",
            "lab-09-test/fused@1024x4096/time_us|.2f",
            "lab-09-test/ceilings/ridge",
            "lab-09-test/claim:traffic_ratio/verdict",
            "lab-09-test/claim:traffic_ratio@1024x4096/measured_ratio",
            "lab-09-test/online@1024x4096/status"))
        rc, page, _ = self.run_script(text)
        self.assertEqual(rc, 0)
        values = [s.split("-->")[1] for s in page.split("<!-- /num -->")[:-1]]
        self.assertEqual(values, ["8.00", "2.50", "2.50", "20.00", "15.0", "holds", "2.5", "skipped"])
        # Rewritten once, the page is up to date: --check passes and changes nothing.
        rc, again, _ = self.run_script(page, "--check")
        self.assertEqual(rc, 0)
        self.assertEqual(again, page)

    def test_check_fails_on_a_stale_span_and_writes_nothing(self):
        text = self.span("lab-09-test/fused@1024x4096/dram_B_per_elem", "7.99")
        rc, page, out = self.run_script(text, "--check")
        self.assertEqual(rc, 1)
        self.assertEqual(page, text)
        self.assertIn("stale", out)

    def test_missing_results_are_pending_and_fail_check(self):
        text = self.span("lab-08-absent/fused@1024x4096/GBps") + self.span("model:lab-08-absent/ceilings/l2_MiB")
        rc, page, _ = self.run_script(text)
        self.assertEqual(rc, 0)
        self.assertIn(lab_numbers.RUN_PENDING, page)
        self.assertIn(lab_numbers.MODEL_PENDING, page)
        rc, _, out = self.run_script(page, "--check")
        self.assertEqual(rc, 1)
        self.assertIn("lab-08-absent", out)

    def test_a_value_the_run_lacks_is_not_measured(self):
        rc, page, _ = self.run_script(self.span("lab-09-test/online@1024x4096/GBps"))
        self.assertEqual(rc, 0)
        self.assertIn(lab_numbers.NOT_MEASURED, page)
        rc, _, _ = self.run_script(page, "--check")
        self.assertEqual(rc, 1)

    def test_mistakes_in_the_text_are_errors_with_file_and_line(self):
        for key in ("lab-09-test/fused@1024x4096/no_such_quantity",   # unknown quantity
                    "lab-09-test/fused@512x4096/GBps",               # no such record
                    "lab-09-test/fused/GBps",                        # no shape
                    "results-typo/fused@1024x4096/GBps",             # malformed source
                    "lab-09-test/fused:unfused@1024x4096/GBps"):     # a ratio needs a ratio quantity
            with self.subTest(key=key):
                rc, _, out = self.run_script("line one\n" + self.span(key))
                self.assertEqual(rc, 2)
                self.assertIn("page.md:2", out)

    def test_a_card_prefix_reads_the_run_of_that_cards_folder(self):
        other = json.loads(json.dumps(RESULTS))
        other["ceilings"]["dram_GBps"] = 3040.0
        card_dir = self.results.parent / "h100" / "lab-09-test"
        card_dir.mkdir(parents=True)
        (card_dir / "results.json").write_text(json.dumps(other))
        text = self.span("lab-09-test/ceilings/dram_GBps") + " " + self.span("h100:lab-09-test/ceilings/dram_GBps")
        rc, page, _ = self.run_script(text)
        self.assertEqual(rc, 0)
        values = [s.split("-->")[1] for s in page.split("<!-- /num -->")[:-1]]
        self.assertEqual(values[1], "3040")
        self.assertNotEqual(values[0], values[1])
        rc, _, out = self.run_script("x\n" + self.span("H1 00:lab-09-test/ceilings/dram_GBps"))
        self.assertEqual(rc, 2)
        self.assertIn("page.md:2", out)

    def test_an_unclosed_span_is_an_error(self):
        rc, _, out = self.run_script("<!-- num:lab-09-test/ceilings/ridge -->13.9")
        self.assertEqual(rc, 2)
        self.assertIn("/num", out)


if __name__ == "__main__":
    unittest.main()
