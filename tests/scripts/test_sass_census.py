#!/usr/bin/env python3
"""Tests of scripts/sass-census.py: counts on a small made-up listing and on two real kernels."""
import importlib.util
import pathlib
import subprocess
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sass-census.py"
spec = importlib.util.spec_from_file_location("sass_census", SCRIPT)
sass_census = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_census)

# Two functions in cuobjdump -sass's layout: each instruction line followed by its encoding line.
LISTING = """
\t\tFunction : _Z6kernelAPf
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe20000000800 */
        /*0010*/                   S2UR UR5, SR_CgaCtaId ;                /* 0x00000000000579c3 */
                                                                          /* 0x000e220000008800 */
        /*0020*/              @!P2 LDS.128 R16, [R37] ;                   /* 0x000000002510a984 */
        /*0030*/                   LDS.128 R20, [R38] ;                   /* 0x000000002614b984 */
        /*0040*/                   STG.E.128.STRONG.SM desc[UR4][R2.64], R4 ;   /* 0x0 */
        /*0050*/                   STG.E desc[UR4][R2.64], R4 ;           /* 0x0 */
        /*0060*/                   BSSY B0, 0x190 ;                       /* 0x0 */
        /*0070*/               @P0 BRA 0x180 ;                            /* 0x0 */
        /*0080*/                   MUFU.EX2 R17, R17 ;                    /* 0x0 */
        /*0090*/                   EXIT ;                                 /* 0x0 */
\t\tFunction : _Z6kernelBPf
        /*0000*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;    /* 0x0 */
        /*0010*/                   STL [R1], R4 ;                         /* 0x0 */
        /*0020*/                   LDL R4, [R1] ;                         /* 0x0 */
        /*0030*/              @UP0 LDS.128 R8, [R9] ;                     /* 0x0 */
        /*0040*/                   UBLKCP.S.G [UR8], [UR10], UR12 ;       /* 0x0 */
        /*0050*/                   EXIT ;                                 /* 0x0 */
"""


def run(*args, stdin=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], input=stdin, capture_output=True,
                          text=True, timeout=60)


class Census(unittest.TestCase):
    def test_counts_per_function(self):
        (a, ca), (b, cb) = sass_census.census_of(LISTING.splitlines())
        self.assertEqual((a, b), ("_Z6kernelAPf", "_Z6kernelBPf"))
        self.assertEqual(ca, {"instructions": 10, "LDG.128": 0, "STG.128": 1, "LDS.128": 2,
                              "LDS.128 predicated": 1, "UBLKCP": 0, "LDL": 0, "STL": 0,
                              "MUFU.EX2": 1, "BSSY": 1, "S2UR": 1})
        self.assertEqual(cb, {"instructions": 6, "LDG.128": 1, "STG.128": 0, "LDS.128": 1,
                              "LDS.128 predicated": 1, "UBLKCP": 1, "LDL": 1, "STL": 1,
                              "MUFU.EX2": 0, "BSSY": 0, "S2UR": 0})

    def test_real_kernels(self):
        # split_row's fp32 two-slice kernels, aligned and windowed, as cuobjdump printed them on
        # the H200 build machine (docs/performance.md quotes these counts): a fixed input, so the
        # counts are of that build, not of today's.
        logs = ROOT / "results" / "h200" / "tuning"
        aligned = logs / "sass-split_row-fp32-pipelined-aligned.txt.gz"
        windowed = logs / "sass-split_row-fp32-pipelined-windowed.txt.gz"
        (_, ca), = sass_census.census_of(sass_census.read_lines(str(aligned)))
        (_, cw), = sass_census.census_of(sass_census.read_lines(str(windowed)))
        pick = ("instructions", "STG.128", "LDS.128", "LDS.128 predicated", "UBLKCP", "BSSY",
                "S2UR")
        self.assertEqual([ca[k] for k in pick], [3568, 4, 20, 16, 12, 105, 12])
        self.assertEqual([cw[k] for k in pick], [4144, 4, 20, 8, 12, 129, 20])

    def test_match_and_table(self):
        r = run("--match", "kernelB", stdin=LISTING)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 3)  # header, rule, kernelB
        self.assertTrue(lines[2].startswith("| `_Z6kernelBPf` | 6 | 1 | 0 | 1 | 1 | 1 | 1 | 1 |"))

    def test_errors(self):
        r = run("--match", "nothere", stdin=LISTING)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no function matching 'nothere'", r.stderr)
        r = run(stdin="no sass here\n")
        self.assertEqual(r.returncode, 1)
        r = run("--match", "(", stdin=LISTING)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--match '('", r.stderr)
        r = run(str(ROOT / "no-such-file.txt"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no-such-file.txt", r.stderr)


if __name__ == "__main__":
    unittest.main()
