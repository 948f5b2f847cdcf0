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


class Cards(unittest.TestCase):
    def test_one_row_a_run_short_and_long_rows_apart_refusals_counted(self):
        d = doc([rec("softmax", 1024, 1.0, 99.0), rec("softmax", 32768, 1.0, 97.5),
                 rec("softmax", 65536, 0, 0, "skipped"), rec("fused", 1024, 1.0, 50.0)])
        d["device"] = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
                       "dispatch_limits": {"compute_capability": "8.0", "restricted_to_profile": "a100"}}
        line = tables.card_row(d, "results/h100/x/results.json")
        cells = [c.strip() for c in line.strip("|").split("|")]
        self.assertEqual(cells[0], "NVIDIA H100 80GB HBM3")
        self.assertEqual(cells[1], "sm_80, the `a100` profile")
        self.assertEqual(cells[3], "4000")
        self.assertEqual(cells[4], "97.5-99.0%")      # `fused` is not the production kernel
        self.assertEqual(cells[5], "- (1 skipped)")  # a refusal is counted, never a number

    def test_a_run_without_dispatch_limits_is_the_cards_own(self):
        d = doc([rec("softmax", 131072, 1.0, 90.0)])
        d["device"] = {"name": "NVIDIA H200", "compute_capability": "9.0"}
        cells = [c.strip() for c in tables.card_row(d, "r.json").strip("|").split("|")]
        self.assertEqual(cells[1], "sm_90, the card's own limits")
        self.assertEqual(cells[4:], ["-", "90.0%"])


def nrec(kernel, n, median_s, pct, dtype="fp32", ld=None, status="ok"):
    r = rec(kernel, n, median_s, pct, status)
    r.update(dtype=dtype, ld_x=ld or n, ld_y=ld or n)
    return r


def ncells(text, dtype, n):
    part = text[text.index(f"### {dtype}"):]
    lines = [l for l in part.splitlines() if l.startswith(f"| {n} |")]
    return [c.strip() for c in lines[0].strip("|").split("|")]


class Neighbours(unittest.TestCase):
    def test_odd_rows_beside_the_nearest_aligned_padded_beside_their_dense_n(self):
        odd = doc([nrec("softmax", 31, 1.0, 60.0), nrec("torch.softmax", 31, 1.5, 40.0),
                   nrec("softmax", 32, 1.0, 95.0), nrec("softmax", 100, 1.0, 90.0), nrec("softmax", 97, 1.0, 90.0),
                   nrec("softmax", 128, 1.0, 99.0), nrec("softmax", 1000, 1.0, 98.0),
                   nrec("cudnn", 97, 0, 0, status="failed"),
                   nrec("softmax", 33, 1.0, 50.0, dtype="bf16"), nrec("softmax", 32, 1.0, 90.0, dtype="bf16")])
        padded = doc([nrec("softmax", 128, 2.0, 49.5, ld=131)])
        text = tables.neighbours_table(odd, "odd.json", padded, "padded.json")
        # 31 beside 32 (log-nearest), 10 points under, 1.5x torch.softmax; a failed peer says so.
        c = ncells(text, "fp32", 31)
        self.assertEqual(c[:7], ["31", "31", str((1 << 27) // 31), "60.0%", "32", "95.0%", "-35.0"])
        self.assertEqual(c[7], "1.50x")
        self.assertEqual(ncells(text, "fp32", 97)[4], "100")  # 25 vectors: aligned in fp32
        self.assertEqual(ncells(text, "fp32", 97)[9], "failed")
        # Whole vectors in the dtype (fp32 100: 25; 1000: 250) are neighbours, not rows.
        firsts = [l.split("|")[1].strip() for l in text.splitlines() if l.startswith("| ")]
        self.assertNotIn("1000", firsts)
        self.assertNotIn("100", firsts)
        # The padded row beside the dense one of its N, from the other run.
        self.assertEqual(ncells(text, "fp32", 128)[:7], ["128", "131", str((1 << 27) // 128), "49.5%", "128",
                                                         "99.0%", "-49.5"])
        self.assertEqual(ncells(text, "bf16", 33)[4:7], ["32", "90.0%", "-40.0"])
        # 100 bf16 is 12.5 vectors: a row off boundaries there.
        bf = doc([nrec("softmax", 100, 1.0, 70.0, dtype="bf16"), nrec("softmax", 128, 1.0, 90.0, dtype="bf16")])
        self.assertEqual(ncells(tables.neighbours_table(bf, "b.json"), "bf16", 100)[4:7], ["128", "90.0%", "-20.0"])

    def test_a_peer_that_wrote_another_y_stride_is_marked(self):
        # torch.softmax on padded x returns a dense y (ld_y = N): marked, with its note, in both
        # tables; the Triton seed wrote the padded y: not marked.
        ours = nrec("softmax", 128, 1.0, 60.0, ld=131)
        torch = nrec("torch.softmax", 128, 0.8, 75.0, ld=131)
        torch["ld_y"] = 128
        seed = nrec("triton.fused", 128, 2.0, 30.0, ld=131)
        padded = doc([ours, torch, seed])
        text = tables.neighbours_table(doc([nrec("softmax", 128, 1.0, 99.0)]), "odd.json", padded, "p.json")
        c = ncells(text, "fp32", 128)
        self.assertEqual(c[7:9], ["0.80x†", "2.00x"])
        self.assertIn("returns a new, dense y", text)
        text = tables.tables(padded, "p.json")
        self.assertEqual(row(text, "128")[2:4], ["0.80x†", "2.00x"])
        self.assertIn("(75%)†", text)
        self.assertIn("returns a new, dense y", text)
        # Without such a peer, no mark and no note.
        self.assertNotIn("†", tables.tables(doc([ours, seed]), "p.json"))

    def test_runs_of_two_cards_are_refused(self):
        a, b = doc([nrec("softmax", 31, 1.0, 60.0)]), doc([nrec("softmax", 128, 1.0, 60.0, ld=131)])
        a["device"], b["device"] = {"name": "NVIDIA H100"}, {"name": "NVIDIA H200"}
        with self.assertRaises(SystemExit) as e:
            tables.neighbours_table(a, "a.json", b, "b.json")
        self.assertIn("different cards", str(e.exception.code))

    def test_a_missing_or_broken_file_is_one_line_naming_it(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            broken = pathlib.Path(d) / "broken.json"
            broken.write_text("{")
            for path, words in ((pathlib.Path(d) / "absent.json", "cannot read it"),
                                (broken, "not JSON")):
                with self.assertRaises(SystemExit) as e:
                    tables.load(str(path))
                message = str(e.exception.code)
                self.assertIn(str(path), message)
                self.assertIn(words, message)
                self.assertNotIn("\n", message)


if __name__ == "__main__":
    unittest.main()
