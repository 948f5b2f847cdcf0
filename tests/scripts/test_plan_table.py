#!/usr/bin/env python3
"""Tests of scripts/plan-table.py on results documents written here (no GPU, no build)."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "plan-table.py"
spec = importlib.util.spec_from_file_location("plan_table", SCRIPT)
plan_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plan_table)

# The dispatch's own sentences (softmax_dispatch.cpp), one per family.
WARP = ("M = 1048576, N = 128 fp32 (512 B rows): warp_rows, 8 lane(s) per row x 4 16-byte vector(s) "
        "per lane = 128 elements in registers, 4 rows per warp per trip, one block per 32 rows")
WARP_R2 = ("M = 1048576, N = 128 fp32 (512 B rows): warp_rows, 16 lane(s) per row x 2 16-byte "
           "vector(s) per lane = 128 elements in registers, 4 rows per warp per trip, one block per 32 rows")
WARP_PERSISTENT = ("M = 1048576, N = 128 bf16 (256 B rows): warp_rows, 8 lane(s) per row x 2 16-byte "
                   "vector(s) per lane = 128 elements in registers, 4 rows per warp per trip, "
                   "grid-stride over rows on a grid sized to the card")
WARP_STAGED = ("M = 541201, N = 31 fp32 (124 B rows): warp_rows staged, 32 row(s) a warp a trip "
               "copied in 16-byte vectors into the warp's shared memory (1024 elements from the first "
               "row's 16-byte window), each row reduced there by 1 lane(s) (max, then sum), the "
               "outputs stored back as 16-byte vectors; grid-stride over rows on a grid sized to the card")
WARP_PACKED = ("M = 134217728, N = 1 bf16 (2 B rows): warp_rows packed, 8 row(s) whole in each "
               "16-byte vector, 4 vectors a lane a trip, each row reduced in the lane's registers "
               "(max, then sum); grid-stride on a grid sized to the card")
WARP_TWO_PASS = ("M = 1048576, N = 128 bf16 (256 B rows): warp_rows, 8 lane(s) per row x 2 16-byte "
                 "vector(s) per lane = 128 elements in registers, 4 rows per warp per trip, "
                 "grid-stride over rows on a grid sized to the card, the row's max reduced over "
                 "its lanes first, then the sum")
BLOCK = ("M = 65536, N = 2048 fp32 (8 KiB rows): block_row, one block per row, 128 threads x 4 16-byte "
         "vectors = 2048 elements in registers, every load issued before the first reduction")
HYBRID = ("M = 2048, N = 65536 fp32 (256 KiB rows): block_hybrid, one block per row, the first 32768 "
          "elements in registers (1024 threads x 8 16-byte vectors), the other 32768 (128 KiB) in shared "
          "memory (TMA bulk copy); no cluster; x read once")
TILE = ("M = 2048, N = 65536 fp32 (256 KiB rows): cluster_tile, a cluster of 2 block(s) per row, each "
        "holding 32768 elements in registers (a tile of 1024 threads x 8 16-byte vectors), (max, sum) "
        "exchanged through distributed shared memory; x read once")
ROW = ("M = 2048, N = 65536 bf16 (128 KiB rows): cluster_row, a cluster of 2 block(s) per row, 32768 "
       "elements (64 KiB) per block held in shared memory (TMA bulk copy), (max, sum) exchanged through "
       "distributed shared memory; x read once")
SPLIT = ("M = 32, N = 4194304 fp32 (16 MiB rows): split_row, each row over 264 blocks of a co-resident "
         "grid of 264 (1 row(s) at a time), 15888 elements per block held in shared memory (62.1 KiB): x "
         "read once; (max, sum) partials through global memory, the next slice prefetched into L2 while a "
         "row waits for its partials; each block copies its next slice in chunk by chunk as it writes this one")
SPLIT_TWICE = ("M = 1, N = 67108864 fp32 (256 MiB rows): split_row, each row over 264 blocks of a "
               "co-resident grid of 264 (1 row(s) at a time), 254204 elements per block, the first 28672 "
               "(112 KiB) held in shared memory, the rest (89% of the row) read twice, the second time in "
               "reverse so its tail hits L2; (max, sum) partials through global memory")

# The dispatch's sentences for split_row's forms: the ring, blocks per SM, the threads' copy.
SPLIT_RING = ("M = 32, N = 4194304 fp32 (16 MiB rows): split_row, each row over 132 blocks of a "
              "co-resident grid of 132 (1 per SM; 1 row(s) at a time), 31776 elements per block held in "
              "shared memory (124 KiB): x read once; (max, sum) partials through global memory; the "
              "block's shared memory (217 KiB) a ring of 7 chunk slots, each of the next slices' chunks "
              "copied in as soon as a slot is free")
SPLIT_ONE_PER_SM = ("M = 64, N = 2097152 fp32 (8 MiB rows): split_row, each row over 44 blocks of a "
                    "co-resident grid of 132 (1 per SM; 3 row(s) at a time), 47664 elements per block held "
                    "in shared memory (186 KiB): x read once; (max, sum) partials through global memory, the "
                    "next slice prefetched into L2 while a row waits for its partials; each block copies its "
                    "next slice in chunk by chunk as it writes this one")
# Two slices per block (the pipelined exchange).
SPLIT_PIPELINED = ("M = 128, N = 1048576 fp32 (4 MiB rows): split_row, each row over 44 blocks of a "
                   "co-resident grid of 132 (1 per SM; 3 row(s) at a time), 23832 elements per block held "
                   "in shared memory (186 KiB for two slices): x read once; (max, sum) partials through "
                   "global memory; each block copies its next slice in chunk by chunk as it writes this "
                   "one; two slices per block: the next row's statistics are published before this row is "
                   "written, a whole trip before any block waits for them")
SPLIT_PIPELINED_PREFETCH = (
    "M = 256, N = 524288 fp32 (2 MiB rows): split_row, each row over 22 blocks of a co-resident grid "
    "of 132 (1 per SM; 6 row(s) at a time), 23832 elements per block held in shared memory (186 KiB "
    "for two slices): x read once; (max, sum) partials through global memory; each block copies its "
    "next slice in chunk by chunk as it writes this one; two slices per block: the next row's "
    "statistics are published before this row is written, a whole trip before any block waits for "
    "them; the slice each trip copies in prefetched into L2 at the trip's start; a partial not yet "
    "published at the trip's start polled again before the statistics' reduction")
SPLIT_PIPELINED3 = ("M = 256, N = 524288 fp32 (2 MiB rows): split_row, each row over 33 blocks of a "
                    "co-resident grid of 132 (1 per SM; 4 row(s) at a time), 15888 elements per block "
                    "held in shared memory (186 KiB for three slices): x read once; (max, sum) partials "
                    "through global memory; each block copies its next slice in chunk by chunk as it "
                    "writes this one; three slices per block: the next row's statistics are published "
                    "before this row is written, a whole trip before any block waits for them, from "
                    "copies issued a whole trip before")
SPLIT_COUNTED = ("M = 134, N = 1000003 fp32 (3.81 MiB rows): split_row, each row over 37 blocks of a "
                 "co-resident grid of 259 (2 per SM; 7 row(s) at a time), 27028 elements per block held "
                 "in shared memory (106 KiB): x read once; (max, sum) partials through global memory; "
                 "each block copies its next slice in chunk by chunk as it writes this one; partials "
                 "counted in (release/acquire), not tagged")
ROW_THREAD_COPY = ("M = 512, N = 262144 bf16 (512 KiB rows): cluster_row, a cluster of 8 block(s) per row, "
                   "32768 elements (64 KiB) per block held in shared memory (copied by the threads, "
                   "cp.async), (max, sum) exchanged through distributed shared memory; x read once")


def record(dtype, m, n, plan, pct=97.25, status="ok", kernel="softmax"):
    return {"kernel": kernel, "dtype": dtype, "M": m, "N": n, "status": status, "pct_of_copy": pct,
            "extra": {"plan": plan}}


def doc(records):
    return {"schema": "softmax-roofline/results", "schema_version": 1, "records": records}


class Short(unittest.TestCase):
    def test_every_family(self):
        self.assertEqual(plan_table.short(WARP), "warp_rows G=8 K=4, one block per 32 rows")
        self.assertEqual(plan_table.short(WARP_R2),
                         "warp_rows G=16 K=2, one block per 32 rows, 2 rows per lane group per trip")
        self.assertEqual(plan_table.short(WARP_PERSISTENT), "warp_rows G=8 K=2, persistent")
        self.assertEqual(plan_table.short(WARP_TWO_PASS), "warp_rows G=8 K=2, persistent, two-pass")
        self.assertEqual(plan_table.short(WARP_TWO_PASS + "; the 16-byte vector two rows of a trip "
                                          "share stored once, whole"),
                         "warp_rows G=8 K=2, persistent, two-pass, shared ends")
        self.assertEqual(plan_table.short(WARP_STAGED), "warp_rows staged R=32 G=1")
        self.assertEqual(plan_table.short(WARP_PACKED), "warp_rows packed, 8 rows a vector, K=4")
        self.assertEqual(plan_table.short(BLOCK), "block_row T=128 K=4")
        self.assertEqual(plan_table.short(TILE), "cluster_tile C=2, 32768 per block in registers")
        self.assertEqual(plan_table.short(HYBRID), "block_hybrid 32768 in registers + 128 KiB in smem")
        self.assertEqual(plan_table.short(ROW), "cluster_row C=2, 64 KiB slices in smem")
        self.assertEqual(plan_table.short(SPLIT), "split_row S=264, R=1, L2 prefetch")
        self.assertEqual(plan_table.short(SPLIT_TWICE), "split_row S=264, R=1, part read twice")
        # fp32 rows read twice with the streamed parts interleaved.
        self.assertEqual(plan_table.short(SPLIT_TWICE + "; the parts not kept in shared memory dealt "
                                          "to the row's blocks in turn, a step each"),
                         "split_row S=264, R=1, part read twice, streamed parts interleaved")
        # Rows on chip with the block's shared memory a ring of chunk slots.
        self.assertEqual(plan_table.short(SPLIT_RING),
                         "split_row S=132, R=1, 1 block(s) per SM, ring of chunk slots")
        self.assertEqual(plan_table.short(SPLIT_ONE_PER_SM),
                         "split_row S=44, R=3, 1 block(s) per SM, L2 prefetch")
        self.assertEqual(plan_table.short(SPLIT_PIPELINED),
                         "split_row S=44, R=3, 1 block(s) per SM, pipelined (2 slices)")
        self.assertEqual(plan_table.short(SPLIT_PIPELINED_PREFETCH),
                         "split_row S=22, R=6, 1 block(s) per SM, L2 prefetch, pipelined (2 slices), "
                         "early re-poll")
        self.assertEqual(plan_table.short(SPLIT_PIPELINED3),
                         "split_row S=33, R=4, 1 block(s) per SM, pipelined (3 slices)")
        self.assertEqual(plan_table.short(SPLIT_COUNTED),
                         "split_row S=37, R=7, 2 block(s) per SM, counted partials")
        self.assertEqual(plan_table.short(ROW_THREAD_COPY),
                         "cluster_row C=8, 64 KiB slices in smem (cp.async)")
        self.assertEqual(plan_table.short(""), "-")


class Table(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)

    def test_rows_per_shape_and_dtype(self):
        with tempfile.TemporaryDirectory() as d:
            fp32, bf16 = pathlib.Path(d) / "a.json", pathlib.Path(d) / "b.json"
            fp32.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK),
                                            record("fp32", 65536, 2048, BLOCK, kernel="fused"),
                                            record("fp32", 2048, 65536, TILE, status="failed")])))
            bf16.write_text(json.dumps(doc([record("bf16", 2048, 65536, ROW, pct=66.6)])))
            out = self.run_script(str(fp32), str(bf16))
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            self.assertIn("| N | M | fp32 plan | fp32 | bf16 plan | bf16 |", lines)
            self.assertIn("| 2048 | 65536 | block_row T=128 K=4 | 97.2% | - | - |", lines)
            # A failed record shows its status, never a number.
            self.assertIn("| 65536 | 2048 | failed | - | cluster_row C=2, 64 KiB slices in smem | 66.6% |", lines)
            self.assertEqual(sum(1 for l in lines if l.startswith("| 2048 |")), 1)  # `fused` is not listed
            # A file without a `softmax` record is not named as a source.
            lab = pathlib.Path(d) / "lab.json"
            lab.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK, kernel="fused")])))
            out = self.run_script(str(fp32), str(lab))
            self.assertIn(str(fp32), out.stdout)
            self.assertNotIn(str(lab), out.stdout)

    def test_into_replaces_only_between_the_markers(self):
        with tempfile.TemporaryDirectory() as d:
            res, md = pathlib.Path(d) / "r.json", pathlib.Path(d) / "notes.md"
            res.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK)])))
            md.write_text(f"before\n{plan_table.BEGIN}\nold table\n{plan_table.END}\nafter\n")
            out = self.run_script(str(res), "--into", str(md))
            self.assertEqual(out.returncode, 0, out.stderr)
            text = md.read_text()
            self.assertTrue(text.startswith("before\n" + plan_table.BEGIN + "\n"))
            self.assertTrue(text.endswith(plan_table.END + "\nafter\n"))
            self.assertNotIn("old table", text)
            self.assertIn("block_row T=128 K=4", text)

    def test_named_markers_leave_the_other_table_alone(self):
        with tempfile.TemporaryDirectory() as d:
            res, md = pathlib.Path(d) / "r.json", pathlib.Path(d) / "notes.md"
            res.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK)])))
            b, e = plan_table.markers("h100")
            md.write_text(f"{plan_table.BEGIN}\nfirst\n{plan_table.END}\n{b}\nsecond\n{e}\n")
            out = self.run_script(str(res), "--into", str(md), "--name", "h100")
            self.assertEqual(out.returncode, 0, out.stderr)
            text = md.read_text()
            self.assertIn("first", text)
            self.assertNotIn("second", text)
            self.assertIn(b + "\nGenerated from", text)
            bad = self.run_script(str(res), "--into", str(md), "--name", "H 100")
            self.assertNotEqual(bad.returncode, 0)

    def test_plans_only_for_a_diff_of_two_runs(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = pathlib.Path(d) / "a.json", pathlib.Path(d) / "b.json"
            a.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK, pct=97.2)])))
            b.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK, pct=95.0)])))
            outs = [self.run_script(str(f), "--plans-only").stdout for f in (a, b)]
            self.assertEqual(outs[0], outs[1])  # the same plans; the % differ
            self.assertEqual(outs[0].splitlines(), ["| N | M | fp32 plan |", "|---:|---:|---|",
                                                    "| 2048 | 65536 | block_row T=128 K=4 |"])

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            other, md = pathlib.Path(d) / "x.json", pathlib.Path(d) / "notes.md"
            other.write_text(json.dumps({"schema": "something else"}))
            bad = self.run_script(str(other))
            self.assertNotEqual(bad.returncode, 0)
            self.assertIn("not a softmax-roofline results document", bad.stderr)
            res = pathlib.Path(d) / "r.json"
            res.write_text(json.dumps(doc([record("fp32", 65536, 2048, BLOCK)])))
            md.write_text("no markers here\n")
            nomark = self.run_script(str(res), "--into", str(md))
            self.assertNotEqual(nomark.returncode, 0)
            self.assertIn("no plan-table markers", nomark.stderr)
            self.assertEqual(md.read_text(), "no markers here\n")  # nothing overwritten


if __name__ == "__main__":
    unittest.main()
