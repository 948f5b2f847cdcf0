#!/usr/bin/env python3
"""Tests of scripts/peers.py --counters' host side: reading ncu's CSV, and failing soft without ncu
(no GPU, no torch needed)."""
import importlib.util
import os
import pathlib
import unittest
from unittest import mock

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "peers.py"
spec = importlib.util.spec_from_file_location("peers", SCRIPT)
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

CSV = '''==PROF== Connected to process 1
"ID","Process ID","Range Name","dram__bytes_read.sum","dram__bytes_write.sum"
"","","","byte","byte"
"0","1","range","1,100","500"
"1","1","range","100","2"
"2","1","range","1000","512"
"3","1","range","90","3"
'''


class NcuRanges(unittest.TestCase):
    def test_ranges_in_order_units_row_skipped(self):
        r = peers.ncu_ranges(CSV)
        self.assertEqual(len(r), 4)
        self.assertEqual(r[0]["dram__bytes_read.sum"], 1100.0)  # thousands separator
        self.assertEqual(r[3]["dram__bytes_write.sum"], 3.0)

    def test_no_table_is_an_error(self):
        with self.assertRaises(ValueError):
            peers.ncu_ranges("==PROF== nothing here\n")


class FailSoft(unittest.TestCase):
    def test_without_ncu_times_stay_and_the_reason_is_given(self):
        recs = [{"kernel": "torch.softmax", "dtype": "fp32", "M": 4, "N": 8, "ld_x": 8,
                 "status": "ok", "time": {"median_s": 1e-5}},
                {"kernel": "triton.fused", "status": "skipped"}]
        with mock.patch("shutil.which", return_value=None):
            peers.count_peer_bytes(recs, 2026, quiet=True)
        self.assertIn("ncu", recs[0]["counters_reason"])
        self.assertNotIn("counters", recs[0])
        self.assertEqual(recs[0]["time"], {"median_s": 1e-5})
        self.assertNotIn("counters_reason", recs[1])

    def test_counted_bytes_attributed_like_the_harness(self):
        recs = [{"kernel": "torch.softmax", "dtype": "fp32", "M": 4, "N": 8, "ld_x": 8, "status": "ok"}]

        def fake_run(cmd, **kw):
            log = cmd[cmd.index("--log-file") + 1]
            pathlib.Path(log).write_text(CSV)
            return mock.Mock(returncode=0, stdout="", stderr="")
        with mock.patch("shutil.which", return_value="/usr/bin/ncu"), \
                mock.patch("subprocess.run", side_effect=fake_run):
            peers.count_peer_bytes(recs, 2026, quiet=True)
        c = recs[0]["counters"]
        self.assertEqual(c["dram__bytes_read.sum"], 1000.0 - 90.0)  # second repetition, eviction out
        self.assertEqual(c["dram__bytes_write.sum"], 512.0 - 3.0)   # the eviction's own writes out too
        self.assertEqual(c["dram_bytes"], 910.0 + 509.0)

    def test_one_child_for_every_record_ranges_taken_in_order(self):
        recs = [{"kernel": "torch.softmax", "dtype": "fp32", "M": 4, "N": 8, "ld_x": 8, "status": "ok"},
                {"kernel": "triton.fused", "status": "skipped"},
                {"kernel": "triton.fused", "dtype": "bf16", "M": 2, "N": 9, "ld_x": 9, "status": "ok"}]
        second = CSV.replace('"1,100","500"', '"7","7"').replace('"1000","512"', '"2000","640"')
        second = second.replace('"90","3"', '"40","1"').replace('"0","1",', '"4","1",')
        children = []

        def fake_run(cmd, **kw):
            children.append(pathlib.Path(cmd[-1]).read_text().split())
            log = cmd[cmd.index("--log-file") + 1]
            pathlib.Path(log).write_text(CSV + "\n".join(second.splitlines()[3:]) + "\n")
            return mock.Mock(returncode=0, stdout="", stderr="")
        with mock.patch("shutil.which", return_value="/usr/bin/ncu"), \
                mock.patch("subprocess.run", side_effect=fake_run):
            peers.count_peer_bytes(recs, 2026, quiet=True)
        self.assertEqual(children, [["torch.softmax,fp32,4,8,8,2026", "triton.fused,bf16,2,9,9,2026"]])
        self.assertEqual(recs[0]["counters"]["dram_bytes"], 910.0 + 509.0)
        self.assertEqual(recs[2]["counters"]["dram__bytes_read.sum"], 2000.0 - 40.0)
        self.assertEqual(recs[2]["counters"]["dram__bytes_write.sum"], 640.0 - 1.0)
        self.assertNotIn("counters", recs[1])

    def test_a_range_missing_fails_every_record_soft(self):
        recs = [{"kernel": "torch.softmax", "dtype": "fp32", "M": 4, "N": 8, "ld_x": 8, "status": "ok",
                 "time": {"median_s": 1e-5}},
                {"kernel": "torch.softmax", "dtype": "fp32", "M": 4, "N": 16, "ld_x": 16, "status": "ok"}]

        def fake_run(cmd, **kw):
            pathlib.Path(cmd[cmd.index("--log-file") + 1]).write_text(CSV)  # 4 ranges, not 8
            return mock.Mock(returncode=0, stdout="", stderr="")
        with mock.patch("shutil.which", return_value="/usr/bin/ncu"), \
                mock.patch("subprocess.run", side_effect=fake_run):
            peers.count_peer_bytes(recs, 2026, quiet=True)
        for r in recs:
            self.assertNotIn("counters", r)
            self.assertIn("4 ranges for 2 records", r["counters_reason"])
        self.assertEqual(recs[0]["time"], {"median_s": 1e-5})



class Reattribute(unittest.TestCase):
    R, W = "dram__bytes_read.sum", "dram__bytes_write.sum"

    def test_an_older_files_writes_lose_the_evictions_own(self):
        # As an H100 run of the older attribution stored it: reads net, writes whole (the eviction
        # range wrote 419.5 MB of its own: torch's int32 sum through an int64 copy).
        rec = {"kernel": "torch.softmax", "M": 4, "N": 8, "status": "ok",
               "counters": {self.R: 536.9e6, self.W: 956.4e6, "dram_bytes": 1493.3e6},
               "extra": {"counters": {"eviction_values": {self.R: 629.2e6, self.W: 419.5e6},
                                      "how": peers.OLD_ATTRIBUTION}}}
        doc = {"records": [rec, {"kernel": "triton.fused", "status": "skipped"}]}
        self.assertEqual(peers.reattribute(doc), 1)
        self.assertAlmostEqual(rec["counters"][self.R], 536.9e6)
        self.assertAlmostEqual(rec["counters"][self.W], 956.4e6 - 419.5e6)
        self.assertEqual(rec["extra"]["counters"]["how"], peers.ATTRIBUTION)
        self.assertEqual(peers.reattribute(doc), 0)  # idempotent: from the stored work range now

    def test_an_unknown_attribution_is_refused(self):
        doc = {"records": [{"kernel": "k", "counters": {self.R: 1, self.W: 1},
                            "extra": {"counters": {"eviction_values": {self.R: 0, self.W: 0},
                                                   "how": "something else"}}}]}
        with self.assertRaises(ValueError):
            peers.reattribute(doc)


if __name__ == "__main__":
    unittest.main()
