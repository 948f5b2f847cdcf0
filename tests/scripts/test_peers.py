"""scripts/peers.py judges the peers as the harness judges its own kernels: the tolerances come from
`softmax-bench verify-settings CONFIG` (the real binary where the build has one: ctest passes it as
SMR_BENCH; a stub otherwise), and its float64 check runs in row chunks with the result of a
whole-matrix check (where torch is importable: on the GPU machine, or a CPU torch here)."""
import importlib.util
import math
import os
import stat
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = os.environ.get("SMR_BENCH") or str(ROOT / "build" / "release" / "src" / "harness" / "softmax-bench")

try:
    import yaml  # noqa: F401 -- peers.py reads configs with it
    HAVE_YAML = True
except ImportError:
    HAVE_YAML = False

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def load_peers():
    spec = importlib.util.spec_from_file_location("peers", ROOT / "scripts" / "peers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CONFIG = textwrap.dedent("""\
    name: no-tolerance
    kernels: [fused]
    dtypes: [fp32, bf16, fp16]
    shapes:
      - [4, 1024]
    """)


@unittest.skipUnless(HAVE_YAML, "python3 has no yaml module (peers.py needs it)")
class VerifySettingsTest(unittest.TestCase):
    def setUp(self):
        self.peers = load_peers()
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def config(self, text):
        path = self.tmp / "config.yaml"
        path.write_text(text)
        return str(path)

    @unittest.skipUnless(os.access(BENCH, os.X_OK), f"softmax-bench not built ({BENCH})")
    def test_peers_get_the_harness_tolerances_for_a_config_without_one(self):
        settings = self.peers.verify_settings(BENCH, self.config(CONFIG))
        # The harness's numbers (src/harness/verify.hpp, storage.hpp; docs/verification.md).
        self.assertEqual(settings["tolerance"], 2.0 ** -15)
        self.assertEqual(self.peers.judged_by(settings, "fp32"), (2.0 ** -15, 1e-20))
        self.assertEqual(self.peers.judged_by(settings, "bf16"), (2.0 ** -8 + 2.0 ** -14, 1e-20))
        self.assertEqual(self.peers.judged_by(settings, "fp16"), (2.0 ** -11 + 2.0 ** -14, 2.0 ** -14))

    @unittest.skipUnless(os.access(BENCH, os.X_OK), f"softmax-bench not built ({BENCH})")
    def test_a_config_tolerance_is_the_fp32_one(self):
        settings = self.peers.verify_settings(BENCH, self.config(CONFIG + "verify:\n  tolerance: 1.0e-4\n"))
        self.assertEqual(self.peers.judged_by(settings, "fp32"), (1e-4, 1e-20))
        self.assertEqual(self.peers.judged_by(settings, "bf16")[0], 2.0 ** -8 + 2.0 ** -14)

    @unittest.skipUnless(os.access(BENCH, os.X_OK), f"softmax-bench not built ({BENCH})")
    def test_a_bad_config_is_the_harness_error(self):
        with self.assertRaises(SystemExit) as e:
            self.peers.verify_settings(BENCH, self.config(CONFIG + "verify:\n  tolerance: 7\n"))
        self.assertIn("exited with 2", str(e.exception))
        self.assertIn("tolerance", str(e.exception))

    def stub(self, body):
        path = self.tmp / "softmax-bench"
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    def test_peers_use_what_softmax_bench_says(self):
        bench = self.stub(textwrap.dedent("""\
            [ "$1" = verify-settings ] || exit 9
            echo '{"tolerance": 0.125, "dtypes": {"fp32": {"tolerance": 0.125, "absolute_floor": 0.5},'
            echo '  "bf16": {"tolerance": 0.25, "absolute_floor": 0.75}}}'"""))
        settings = self.peers.verify_settings(bench, self.config(CONFIG))
        self.assertEqual(self.peers.judged_by(settings, "fp32"), (0.125, 0.5))
        self.assertEqual(self.peers.judged_by(settings, "bf16"), (0.25, 0.75))

    def test_missing_or_failing_softmax_bench_is_an_error(self):
        with self.assertRaises(SystemExit) as e:
            self.peers.verify_settings(str(self.tmp / "nosuch"), self.config(CONFIG))
        self.assertIn("--bench", str(e.exception))
        bench = self.stub("echo 'config.yaml:3:1: dtypes: unknown dtype' >&2; exit 2")
        with self.assertRaises(SystemExit) as e:
            self.peers.verify_settings(bench, self.config(CONFIG))
        self.assertIn("unknown dtype", str(e.exception))
        bench = self.stub("echo not json")
        with self.assertRaises(SystemExit) as e:
            self.peers.verify_settings(bench, self.config(CONFIG))
        self.assertIn("unexpected output", str(e.exception))


@unittest.skipUnless(HAVE_YAML and HAVE_TORCH, "needs torch (CPU is enough) and yaml")
class ChunkedVerifyTest(unittest.TestCase):
    """verify() in row chunks gives what one whole-matrix float64 check gives."""

    def setUp(self):
        self.peers = load_peers()
        g = torch.Generator().manual_seed(7)
        self.x = torch.randn((37, 300), generator=g)
        self.x[5, 3] = float("nan")            # a NaN row
        self.x[9, :] = float("-inf")           # an all -inf row: NaN out
        self.y = torch.softmax(self.x.double(), dim=-1).float()

    def whole(self, x, y, tolerance, floor):
        # The one-pass check peers.py made before its row chunks.
        ref = torch.softmax(x.double(), dim=-1)
        got = y.double()
        err = (got - ref).abs() / ref.abs().clamp_min(floor)
        bad_nan = torch.isnan(got) != torch.isnan(ref)
        err = torch.where(torch.isnan(ref), torch.zeros_like(err), err)
        worst = float(err.max())
        diff = torch.where(torch.isnan(ref), torch.zeros_like(ref), got - ref)
        ref0 = torch.where(torch.isnan(ref), torch.zeros_like(ref), ref)
        rel_l2 = float(diff.norm() / ref0.norm())
        return worst, int(err.argmax()), int(bad_nan.sum()), rel_l2

    def check(self, x, y, chunk_bytes):
        worst, at, bad, diff_sq, ref_sq = self.peers.verify_rows(torch, x, y, 1e-20, chunk_bytes)
        w_worst, w_at, w_bad, w_l2 = self.whole(x, y, 2.0 ** -15, 1e-20)
        if math.isnan(w_worst):
            self.assertTrue(math.isnan(worst))
        else:
            self.assertEqual(worst, w_worst)
            self.assertEqual(at, w_at)
        self.assertEqual(bad, w_bad)
        rel_l2 = math.sqrt(diff_sq) / math.sqrt(ref_sq)
        if math.isnan(w_l2):
            self.assertTrue(math.isnan(rel_l2))
        else:
            self.assertAlmostEqual(rel_l2, w_l2, delta=1e-12 * max(w_l2, 1e-30))

    def test_chunks_of_one_to_all_rows_agree_with_the_whole(self):
        y = self.y.clone()
        y[20, 17] *= 1.01     # the worst error, in a later chunk
        y[3, 2] *= 1.001
        for chunk in (1, 8 * 300, 8 * 300 * 5, 1 << 30):
            with self.subTest(chunk_bytes=chunk):
                self.check(self.x, y, chunk)
        r = self.peers.verify(torch, self.x, y, 2.0 ** -15, 1e-20)
        self.assertFalse(r["passed"])
        self.assertIn("row 20, column 17", r["detail"])
        self.assertEqual(r["rows_checked"], 37)

    def test_wrong_nan_pattern_and_a_pass(self):
        y = self.y.clone()
        y[30, 1] = float("nan")
        self.check(self.x, y, 8 * 300 * 4)
        r = self.peers.verify(torch, self.x, y, 2.0 ** -15, 1e-20)
        self.assertEqual(r["detail"], "1 elements with the wrong NaN pattern")
        r = self.peers.verify(torch, self.x, self.y, 2.0 ** -15, 1e-20)
        self.assertTrue(r["passed"], r["detail"])


if __name__ == "__main__":
    unittest.main()
