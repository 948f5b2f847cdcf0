#!/usr/bin/env python3
"""Tests of scripts/sass-same.py: which functions of one listing match another's."""
import gzip
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "sass-same.py"

# cuobjdump -sass's layout. The same two kernels built from two source paths: other anonymous
# namespace hashes, other addresses and encodings.
OLD = """
\t\tFunction : _ZN3smr4prod45_GLOBAL__N__1ef810fb_12_split_row_cu_6e3ae7fc1kILb0EEEvPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0010*/              @!P2 LDS.128 R16, [R37] ;                   /* 0x000000002510a984 */
        /*0020*/                   EXIT ;                                 /* 0x000000000000794d */
\t\tFunction : _ZN3smr4prod45_GLOBAL__N__1ef810fb_12_split_row_cu_6e3ae7fc1kILb1EEEvPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0010*/               @P5 BRA 0x40 ;                             /* 0x0000000000005947 */
        /*0020*/                   LDS.128 R16, [R37] ;                   /* 0x000000002510a984 */
        /*0030*/                   EXIT ;                                 /* 0x000000000000794d */
"""
NEW = """
\t\tFunction : _ZN3smr4prod45_GLOBAL__N__0a1b2c3d_12_split_row_cu_112233441kILb0EEEvPf
        /*0100*/                   LDC R1, c[0x0][0x28] ;                 /* 0x1 */
        /*0110*/              @!P2 LDS.128 R16, [R37] ;                   /* 0x2 */
        /*0120*/                   EXIT ;                                 /* 0x3 */
\t\tFunction : _ZN3smr4prod45_GLOBAL__N__0a1b2c3d_12_split_row_cu_112233441kILb1EEEvPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x1 */
        /*0010*/                   SEL R37, R37, R38, P5 ;                /* 0x2 */
        /*0020*/                   LDS.128 R16, [R37] ;                   /* 0x3 */
        /*0030*/                   EXIT ;                                 /* 0x4 */
"""


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60)


class SassSame(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = pathlib.Path(self.dir.name)
        self.old, self.new, self.empty = d / "old.txt", d / "new.txt", d / "empty.txt"
        self.old.write_text(OLD)
        self.new.write_text(NEW)
        self.empty.write_text("Fatbin elf code:\n")

    def tearDown(self):
        self.dir.cleanup()

    def rows(self, out):
        return [line for line in out.splitlines() if line.startswith("| `")]

    def test_same_and_changed(self):
        r = run(str(self.new), str(self.old))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = self.rows(r.stdout)
        self.assertEqual(len(rows), 2)
        self.assertTrue(rows[0].endswith(f"| 3 | {self.old} |"), rows[0])  # <false>: unchanged
        self.assertTrue(rows[1].endswith("| 4 | none |"), rows[1])  # <true>: SEL for the branch
        self.assertIn("1 the same as", r.stdout)
        self.assertIn("1 like none", r.stdout)

    def test_first_matching_base_wins(self):
        r = run(str(self.old), str(self.new), str(self.old))
        rows = self.rows(r.stdout)
        self.assertTrue(rows[0].endswith(f"| {self.new} |"), rows[0])
        self.assertTrue(rows[1].endswith(f"| {self.old} |"), rows[1])

    def test_gzipped_listing(self):  # the listings kept in results/ are .gz
        gz = pathlib.Path(self.dir.name) / "old.txt.gz"
        with gzip.open(gz, "wt") as f:
            f.write(OLD)
        rows = self.rows(run(str(self.new), str(gz)).stdout)
        self.assertTrue(rows[0].endswith(f"| {gz} |"), rows[0])
        self.assertTrue(rows[1].endswith("| none |"), rows[1])

    def test_bad_input(self):
        r = run(str(self.new), str(self.dir.name) + "/missing.txt")
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.txt", r.stderr)
        r = run(str(self.empty), str(self.old))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no function", r.stderr)


if __name__ == "__main__":
    unittest.main()
