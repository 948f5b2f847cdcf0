#!/usr/bin/env python3
"""Times the library peers softmax-bench cannot run in-process: torch.softmax and the seed design
written in Triton, on the shapes of a softmax-bench config, the same way softmax-bench times its
own kernels (docs/timing.md), and writes them as records of the results schema.

    scripts/peers.py [CONFIG] [--out peers.json] [--kernels torch.softmax,triton.fused]
                     [--bench SOFTMAX_BENCH] [--quiet] [--counters]
    softmax-bench run CONFIG --peers peers.json      # or: softmax-bench report RESULTS.json --peers peers.json

CONFIG is a softmax-bench sweep config (YAML or JSON; default configs/default.yaml). Its shapes,
dtypes, row_pad, timing policy and seed are used; its `kernels` are not (the peers are always
these two). The tolerances are the harness's own: `softmax-bench verify-settings CONFIG` prints
them (the config's verify.tolerance or the harness's default for fp32, the storage rounding for
16-bit outputs), so the peers and the harness's kernels get the same verdict. softmax-bench is
--bench PATH, else $SMR_BENCH, else build/release/src/harness/softmax-bench. Needs a CUDA GPU with
PyTorch and Triton.

Method, as in the harness: inputs N(0, 1) with a few +20 outliers per row; every output verified
against a float64 torch reference (max relative error, |y - ref| / max(|ref|, the dtype's floor);
rows in chunks of at most VERIFY_CHUNK_BYTES of float64), timing skipped when it fails; warm-up
outside the timing; before each timed sample the L2 is
flushed by writing a buffer of twice its size and reading it back, then the GPU spins ~100 us
(torch.cuda._sleep) while Python enqueues the launch; CUDA events around the launch;
launches shorter than 10 us are batched (a CUDA graph of K launches over K distinct input and
output sets); at least min_repetitions samples and min_time_s of timed time; median, min, max,
mean, stddev and cv over the samples. effective_GBps = 2 x M x N x dtype bytes / median time (one
read of x, one write of y), the convention of softmax-bench, PyTorch, the Triton tutorial and QuACK.

Padded rows (row_pad > 0): both peers read x at ld = N + row_pad; the Triton seed writes a y of
the same stride, torch.softmax returns a new, dense y, so its records say ld_y = N (and
scripts/tables.py marks them: not the problem the others solve, which must write around y's
padding).

The output is a results document (schema softmax-roofline/results) holding only peer records; its
ceilings are torch's own copy_ bandwidth measured here (softmax-bench recomputes pct_of_copy
against the run's copy ceiling when it merges the file). Records carry no model of their own: the
merge gives them the fused (one read, one write) model, the floor for any softmax.

--counters: after the timing, each ok record's DRAM bytes are counted by Nsight Compute over a child
process (count_peer_bytes below says how) and written as the record's `counters`
(the DRAM read and write metrics of src/core/metrics.hpp, and dram_bytes), so the roofline plot and
the traffic columns place the peers by measured bytes. Optional and fail-soft: without ncu each
record keeps its times and gets a counters_reason.
"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import metrics  # noqa: E402  (scripts/metrics.py: the names of src/core/metrics.hpp)

SCHEMA = "softmax-roofline/results"
SCHEMA_VERSION = 1
PEERS = ["torch.softmax", "triton.fused"]

# The timing policy's constants, the same as src/harness/timing.hpp.
MIN_SAMPLE_S = 10e-6      # a launch shorter than this is batched
BATCH_TARGET_S = 50e-6    # a batched sample aims at this much GPU time
MAX_BATCH = 256
MAX_SAMPLES = 10000
CALIBRATION_LAUNCHES = 3
# Before each sample's start event the GPU spins this many cycles (~100 us at ~2 GHz) while Python
# enqueues the launch, so the events never measure the launch's CPU cost (Triton's launcher spends
# tens of microseconds in Python). The harness does the same with a 20 us spin kernel.
LEAD_CYCLES = 200_000
OUTLIER = 20.0            # src/harness/verify.cpp's outlier rows: N(0, 1) plus a few +20 values
COPY_CEILING_BYTES = 1 << 30
# Largest BLOCK_SIZE the seed kernel is run with: 64 fp32 values per thread at 32 warps. A longer
# row does not fit one tile (the registers spill or the compile fails): skipped with the reason.
MAX_TRITON_BLOCK = 65536

# The float64 reference is computed this many bytes of rows at a time (each chunk's x, y and
# reference in float64 and the error: about 5x this at once), never for all of x: bf16 32768 x
# 65536 would want 16 GiB for the reference alone.
VERIFY_CHUNK_BYTES = 256 << 20

DEFAULTS = {"timing": {"warmup": 3, "min_repetitions": 20, "min_time_s": 0.05, "flush_l2": True},
            "seed": 2026, "row_pad": 0, "dtypes": ["fp32"]}


def fail(msg):
    sys.exit(f"peers.py: {msg}")


# ---- the config: the same expansion as src/harness/config_schema.cpp --------------------------

def int_set(v, where):
    """An integer, a list of integers or a power-of-two range {from: A, to: B}."""
    if isinstance(v, bool):
        fail(f"{where}: expected an integer, a list or a range")
    if isinstance(v, int):
        return [v]
    if isinstance(v, list):
        return [int(x) for x in v]
    if isinstance(v, dict):
        lo, hi = int(v["from"]), int(v["to"])
        out, x = [], lo
        while x <= hi:
            out.append(x)
            x *= 2
        return out
    fail(f"{where}: expected an integer, a list or a range")


def shapes_of(cfg):
    shapes = [(int(m), int(n)) for m, n in cfg.get("shapes", [])]
    sweep = cfg.get("sweep")
    if sweep:
        ns = int_set(sweep["N"], "sweep.N")
        if "M" in sweep:
            shapes += [(m, n) for n in ns for m in int_set(sweep["M"], "sweep.M")]
        else:
            shapes += [(e // n, n) for n in ns for e in int_set(sweep["elements"], "sweep.elements")]
    if not shapes:
        fail("the config has no shapes")
    return shapes


def load_config(path):
    with open(path) as f:
        cfg = yaml.safe_load(f)  # JSON is YAML too
    if not isinstance(cfg, dict):
        fail(f"{path}: not a config mapping")
    out = dict(DEFAULTS)
    out.update(cfg)
    out["timing"] = dict(DEFAULTS["timing"], **(cfg.get("timing") or {}))
    out["expanded_shapes"] = shapes_of(cfg)
    return out


def default_bench(repo):
    return os.environ.get("SMR_BENCH") or str(repo / "build" / "release" / "src" / "harness" / "softmax-bench")


def verify_settings(bench, config):
    """The harness's verification of CONFIG: {"tolerance": the config's, "dtypes": {dtype:
    {"tolerance", "absolute_floor"}}}, from `softmax-bench verify-settings CONFIG`."""
    if not (os.path.isfile(bench) and os.access(bench, os.X_OK)):
        fail(f"softmax-bench not found at {bench}: build it (cmake --build --preset release) or pass "
             f"--bench PATH; its `verify-settings` gives the tolerances the peers are judged with")
    p = subprocess.run([bench, "verify-settings", config], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{bench} verify-settings {config} exited with {p.returncode}: "
             f"{(p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout).strip() else ''}")
    try:
        settings = json.loads(p.stdout)
        for d in settings["dtypes"].values():
            float(d["tolerance"]), float(d["absolute_floor"])
        float(settings["tolerance"])
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        fail(f"{bench} verify-settings {config}: unexpected output ({type(e).__name__}: {e})")
    return settings


def judged_by(settings, dtype):
    """(tolerance, absolute floor) a record of dtype is verified with: the harness's, for it."""
    d = settings["dtypes"][dtype]
    return float(d["tolerance"]), float(d["absolute_floor"])


# ---- timing ----------------------------------------------------------------------------------

class Timer:
    def __init__(self, torch, l2_bytes, policy):
        self.torch = torch
        self.policy = policy
        # Twice the L2, written then read back: the L2 then holds only clean lines of this buffer.
        self.flush_buf = torch.empty(2 * l2_bytes // 4, dtype=torch.float32, device="cuda")

    def flush(self):
        self.flush_buf.zero_()
        self.flush_buf.sum()

    def hold(self):
        self.torch.cuda._sleep(LEAD_CYCLES)

    def _events(self):
        c = self.torch.cuda
        return c.Event(enable_timing=True), c.Event(enable_timing=True)

    def calibrate(self, launch, flush):
        for _ in range(int(self.policy["warmup"])):
            launch(0)
        self.torch.cuda.synchronize()
        t = []
        for _ in range(CALIBRATION_LAUNCHES):
            if flush:
                self.flush()
            self.hold()
            a, b = self._events()
            a.record()
            launch(0)
            b.record()
            b.synchronize()
            t.append(a.elapsed_time(b) * 1e-3)
        return sorted(t)[len(t) // 2]

    def measure(self, make_launch, set_bytes, flush):
        """make_launch(sets) -> launch(i): sets are buffer sets (0 is the record's own)."""
        sets = 1
        launch = make_launch(1)
        single = self.calibrate(launch, flush)
        launches, graph_used = 1, False
        if single < MIN_SAMPLE_S:
            launches = int(min(max(math.ceil(BATCH_TARGET_S / max(single, 1e-9) - 1e-9), 2), MAX_BATCH))
            free, _ = self.torch.cuda.mem_get_info()
            affordable = max(1, (free - (256 << 20)) // max(set_bytes, 1) + 1)
            sets = int(min(launches, affordable)) if flush else 1
            launch = make_launch(sets)
        batch = lambda: [launch(i % sets) for i in range(launches)]
        if launches > 1:
            try:
                g = self.torch.cuda.CUDAGraph()
                s = self.torch.cuda.Stream()
                s.wait_stream(self.torch.cuda.current_stream())
                with self.torch.cuda.stream(s):
                    batch()  # warm the launches on the side stream before capture
                self.torch.cuda.current_stream().wait_stream(s)
                with self.torch.cuda.graph(g):
                    batch()
                replay = g.replay
                graph_used = True
            except Exception:  # noqa: BLE001 -- not capturable: enqueue one by one
                replay = batch
        else:
            replay = batch
        n = int(min(max(self.policy["min_repetitions"],
                        math.ceil(self.policy["min_time_s"] / max(single * launches, 1e-12))), MAX_SAMPLES))
        samples = []
        for _ in range(n):
            if flush:
                self.flush()
            self.hold()
            a, b = self._events()
            a.record()
            replay()
            b.record()
            b.synchronize()
            samples.append(a.elapsed_time(b) * 1e-3 / launches)
        stats = summarize(samples, launches, flush and sets == launches)
        plan = {"calibration_s": single, "launches_per_sample": launches, "buffer_sets": sets,
                "graph": graph_used}
        return stats, plan


def summarize(v, launches, flushed):
    v = sorted(v)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    return {"median_s": median, "min_s": v[0], "max_s": v[-1], "mean_s": mean, "stddev_s": sd,
            "cv": sd / mean if mean > 0 else 0.0, "samples": n, "launches_per_sample": launches,
            "l2_flushed": bool(flushed)}


# ---- the peers -------------------------------------------------------------------------------

def make_triton_seed(triton, tl):
    @triton.jit
    def softmax_seed(y_ptr, x_ptr, x_row_stride, y_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
        # One program per row; the whole row is one power-of-two tile held in registers.
        row_idx = tl.program_id(0).to(tl.int64)  # int64: row_idx * stride passes 2^31 on big inputs
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        # -inf in the padding lanes: they change neither the max nor (exp(-inf) = 0) the sum.
        # 16-bit storage is computed in fp32, as the harness's kernels do (a no-op for fp32).
        x = tl.load(x_ptr + row_idx * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        y = num / tl.sum(num, axis=0)
        tl.store(y_ptr + row_idx * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
    return softmax_seed


def num_warps_for(block):
    # More warps for longer tiles, so each thread holds at most 64 fp32 values.
    if block <= 1024:
        return 4
    if block <= 2048:
        return 8
    if block <= 8192:
        return 16
    return 32


def make_input(torch, M, N, ld, seed, dtype):
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    full = torch.randn((M, ld), generator=g, device="cuda", dtype=torch.float32)
    # Every fourth row has outliers (+20 at a few columns), so softmax is far from uniform.
    rows = torch.arange(0, M, 4, device="cuda")
    cols = torch.randint(0, N, (rows.numel(), 4), generator=g, device="cuda")
    full[rows.unsqueeze(1), cols] += OUTLIER
    if ld > N:
        full[:, N:] = 1e30  # padding sentinel, as the harness: never read into a result
    return full[:, :N].to(dtype)


# Storage types: torch dtype and bytes. Their tolerance and absolute floor come from the harness
# (verify_settings).
DTYPES = {"fp32": ("float32", 4), "bf16": ("bfloat16", 2), "fp16": ("float16", 2)}


def verify_rows(torch, x, y, floor, chunk_bytes=VERIFY_CHUNK_BYTES):
    """Every element of y against softmax(x) in float64, in row chunks of at most chunk_bytes of
    float64: the largest |y - ref| / max(|ref|, floor) (NaN where y is NaN and ref is not) and the
    first element holding it, the number of elements with the wrong NaN pattern, and the sums of
    squares of y - ref and ref (NaN rows of ref left out)."""
    M, N = x.shape
    rows = max(1, chunk_bytes // max(8 * N, 1))
    worst, worst_at, bad_nan, diff_sq, ref_sq = 0.0, None, 0, 0.0, 0.0
    for r0 in range(0, M, rows):
        ref = torch.softmax(x[r0:r0 + rows].double(), dim=-1)
        got = y[r0:r0 + rows].double()
        nan_ref = torch.isnan(ref)
        err = (got - ref).abs() / ref.abs().clamp_min(floor)
        bad_nan += int((torch.isnan(got) != nan_ref).sum())
        err = torch.where(nan_ref, torch.zeros_like(err), err)
        chunk_worst = float(err.max())
        # The first element of the largest error (NaN above everything), as a whole-matrix argmax.
        if worst_at is None or (math.isnan(chunk_worst) and not math.isnan(worst)) or chunk_worst > worst:
            worst, worst_at = chunk_worst, r0 * N + int(err.argmax())
        diff_sq += float(torch.where(nan_ref, torch.zeros_like(ref), got - ref).square().sum())
        ref_sq += float(torch.where(nan_ref, torch.zeros_like(ref), ref).square().sum())
        del ref, got, err, nan_ref
    return worst, worst_at, bad_nan, diff_sq, ref_sq


def verify(torch, x, y, tolerance, floor):
    worst, worst_at, bad_nan, diff_sq, ref_sq = verify_rows(torch, x, y, floor)
    rel_l2 = math.sqrt(diff_sq) / math.sqrt(ref_sq) if ref_sq > 0 else 0.0
    passed = not bad_nan and math.isfinite(worst) and worst <= tolerance
    detail = ""
    if not passed:
        if bad_nan:
            detail = f"{bad_nan} elements with the wrong NaN pattern"
        else:
            i = worst_at
            detail = (f"row {i // x.shape[1]}, column {i % x.shape[1]}: relative error {worst:.3g} "
                      f"> tolerance {tolerance:g}")
    return {"passed": passed, "max_rel_err": worst if math.isfinite(worst) else None,
            "rel_l2_err": rel_l2, "tolerance": tolerance, "rows_checked": int(x.shape[0]),
            "detail": detail}


def null_model(note):
    keys = ["dram_read_bytes", "dram_write_bytes", "dram_bytes", "l2_bytes", "passes", "flops",
            "intensity", "bound_time_s", "bound_GBps"]
    m = {k: None for k in keys}
    m.update({"traffic": "fused", "bound": "", "note": note})
    return m


# ---- counted bytes (--counters): Nsight Compute over one child process ------------------------
#
# The harness counts its kernels with CUPTI in-process; the peers run in this Python process, so
# ncu counts them instead, the same way scripts/ncu-compare counts the harness's launches:
# `ncu --clock-control none --replay-mode app-range --target-processes all` over one child
# (`peers.py --count-many FILE`, a record per line) that, for each record in turn, runs after a
# warm-up two cudaProfilerStart/Stop ranges, twice: range 1 the launch then an L2 eviction (a sum
# over 4x the L2, so the launch's dirty lines are written back inside the range), range 2 the
# eviction alone. Reads and writes = range 1 - range 2: the eviction's own traffic comes out (torch
# sums int32 into int64 through a converted copy, which it writes: 8 bytes per element of the
# buffer), the launch's write-backs stay in. The second repetition is used (the first profiled
# range of a process reads high). One child for every record: Python, torch and ncu start once.
# Optional and fail-soft: without ncu, or when a count fails, the records keep their times and say
# why in counters_reason. `--reattribute PEERS.json` recomputes a file's counts from the ranges it
# stored (attribute() below), for files written before the eviction's writes were taken out.
COUNTER_METRICS = [metrics.DRAM_READ, metrics.DRAM_WRITE]
COUNT_REPEAT = 2
RANGES_PER_RECORD = 2 * COUNT_REPEAT
EVICT_MULTIPLE = 4


def count_spec(rec, seed):
    """One line of the child's list: KERNEL,DTYPE,M,N,LD,SEED."""
    return f"{rec['kernel']},{rec['dtype']},{rec['M']},{rec['N']},{rec['ld_x']},{seed}"


def count_many_child(spec_file):
    """The child ncu profiles: RANGES_PER_RECORD ranges for each line of spec_file, in order."""
    import torch
    import triton
    import triton.language as tl
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    evict_buf = torch.ones(EVICT_MULTIPLE * l2 // 4, device="cuda", dtype=torch.int32)
    seed_kernel = make_triton_seed(triton, tl)

    def evict():
        evict_buf.sum()  # integer reads only; its one-element output is noise

    for spec in Path(spec_file).read_text().split():
        kernel, dtype_name, M, N, ld, seed = spec.split(",")
        M, N, ld, seed = int(M), int(N), int(ld), int(seed)
        tdtype = getattr(torch, DTYPES[dtype_name][0])
        x = make_input(torch, M, N, ld, seed, tdtype)
        y = None
        if kernel == "torch.softmax":
            def launch():
                torch.softmax(x, dim=-1)
        else:
            block = triton.next_power_of_2(N)
            y = torch.empty((M, ld), device="cuda", dtype=tdtype)[:, :N]

            def launch():
                seed_kernel[(M,)](y, x, x.stride(0), y.stride(0), N, BLOCK_SIZE=block,
                                  num_warps=num_warps_for(block))

        launch()  # warm-up (and Triton's compile), unprofiled
        evict()
        torch.cuda.synchronize()
        for _ in range(COUNT_REPEAT):
            evict()
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            launch()
            evict()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            torch.cuda.profiler.start()
            evict()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
        del x, y
        torch.cuda.empty_cache()


def ncu_ranges(csv_text):
    """ncu --csv --page raw: one dict per range, in order, for COUNTER_METRICS."""
    import csv
    lines = csv_text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no CSV result table in ncu's output")
    rows = []
    for row in csv.DictReader(lines[start:]):
        vals = {}
        for m in COUNTER_METRICS:
            try:
                vals[m] = float((row.get(m) or "").replace(",", "").strip())
            except ValueError:
                vals[m] = None
        if all(v is None for v in vals.values()):
            continue  # the units row
        rows.append(vals)
    return rows


def count_peer_bytes(records, seed, quiet):
    """Adds counters (measured DRAM bytes) to every ok record, or counters_reason."""
    import shutil
    import subprocess
    import tempfile
    ncu = shutil.which("ncu")
    todo = [rec for rec in records if rec.get("status") == "ok"]
    if not todo:
        return
    if not ncu:
        for rec in todo:
            rec["counters_reason"] = "ncu (Nsight Compute) is not on PATH: peers.py --counters counts with it"
        return
    if not quiet:
        print(f"counting {len(todo)} peer records under ncu", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        specs = Path(tmp) / "specs.txt"
        specs.write_text("".join(count_spec(rec, seed) + "\n" for rec in todo))
        cmd = [ncu, "--clock-control", "none", "--replay-mode", "app-range", "--target-processes",
               "all", "--metrics", ",".join(COUNTER_METRICS), "--csv", "--page", "raw",
               "--print-units", "base", "--log-file", str(log),
               sys.executable, str(Path(__file__).resolve()), "--count-many", str(specs)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            ranges = ncu_ranges(log.read_text()) if log.exists() else []
            if proc.returncode != 0 or len(ranges) != RANGES_PER_RECORD * len(todo):
                last = (proc.stdout + proc.stderr).strip().splitlines()
                raise RuntimeError(f"ncu exit {proc.returncode}, {len(ranges)} ranges for "
                                   f"{len(todo)} records" + (f": {last[-1]}" if last else ""))
        except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
            for rec in todo:
                rec["counters_reason"] = f"ncu count failed: {e}"
            return
    for i, rec in enumerate(todo):
        mine = ranges[RANGES_PER_RECORD * i:RANGES_PER_RECORD * (i + 1)]
        work, evict = mine[-2], mine[-1]
        if any(v is None for v in list(work.values()) + list(evict.values())):
            rec["counters_reason"] = "ncu count failed: a metric has no value"
            continue
        attribute(rec, work, evict)


ATTRIBUTION = ("range (launch + L2 eviction) - range (eviction alone), reads and writes; the second "
               "of two repetitions")
# What files written before the eviction's own writes were taken out say in extra.counters.how.
OLD_ATTRIBUTION = ("range (launch + L2 eviction) - range (eviction) for reads; writes of the first "
                   "range whole; the second of two repetitions")


def attribute(rec, work, evict):
    """The record's counters from its two ranges' counts: work (launch + eviction), evict (alone)."""
    read = work[metrics.DRAM_READ] - evict[metrics.DRAM_READ]
    write = work[metrics.DRAM_WRITE] - evict[metrics.DRAM_WRITE]
    rec["counters"] = {metrics.DRAM_READ: read, metrics.DRAM_WRITE: write, "dram_bytes": read + write}
    rec.setdefault("extra", {})["counters"] = {
        "tool": "ncu", "replay": "app-range", "work_values": work, "eviction_values": evict,
        "how": ATTRIBUTION}


def reattribute(doc):
    """Recomputes every counted record of a peers document from the ranges it stored; returns how
    many changed. A record of the older attribution stored the eviction range and the derived
    counts (reads net of the eviction, writes whole), from which the work range follows."""
    changed = 0
    for rec in doc.get("records", []):
        c = (rec.get("extra") or {}).get("counters") or {}
        if "counters" not in rec or "eviction_values" not in c:
            continue
        evict = c["eviction_values"]
        if "work_values" in c:
            work = c["work_values"]
        elif c.get("how") == OLD_ATTRIBUTION:
            work = {metrics.DRAM_READ: rec["counters"][metrics.DRAM_READ] + evict[metrics.DRAM_READ],
                    metrics.DRAM_WRITE: rec["counters"][metrics.DRAM_WRITE]}
        else:
            raise ValueError(f"record {rec.get('kernel')} {rec.get('M')}x{rec.get('N')}: counters of "
                             f"an unknown attribution ({c.get('how')!r})")
        before = rec["counters"]
        attribute(rec, work, evict)
        changed += rec["counters"] != before
    return changed


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--count-many":
        return count_many_child(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--reattribute":
        path = Path(sys.argv[2])
        try:
            doc = json.loads(path.read_text())
            n = reattribute(doc)
        except (OSError, ValueError, KeyError) as e:
            fail(f"--reattribute {path}: {e}")
        tmp = path.with_name(path.name + ".tmp")  # the file is replaced whole, or not at all
        tmp.write_text(json.dumps(doc, indent=2) + "\n")
        os.replace(tmp, path)
        print(f"peers.py: {path}: {n} record(s) re-attributed")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    repo = Path(__file__).resolve().parent.parent
    ap.add_argument("config", nargs="?", default=str(repo / "configs" / "default.yaml"))
    ap.add_argument("--out", default="peers.json", help="output file (default peers.json)")
    ap.add_argument("--kernels", default=",".join(PEERS), help="comma-separated subset of " + ", ".join(PEERS))
    ap.add_argument("--bench", default=default_bench(repo),
                    help="softmax-bench, whose verify-settings give the tolerances (default: $SMR_BENCH, "
                         "else the release build's)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--counters", action="store_true",
                    help="also count each ok record's DRAM bytes with Nsight Compute (ncu on PATH); "
                         "without ncu the records keep their times and say why")
    args = ap.parse_args()
    kernels = [k for k in args.kernels.split(",") if k]
    for k in kernels:
        if k not in PEERS:
            fail(f"--kernels: unknown peer '{k}' (known: {', '.join(PEERS)})")
    cfg = load_config(args.config)
    settings = verify_settings(args.bench, args.config)
    for t in cfg["dtypes"]:
        if t in DTYPES and t not in settings["dtypes"]:
            fail(f"{args.bench} verify-settings gives no tolerance for dtype {t}")

    import torch  # noqa: E402 -- after the argument checks, which need neither
    import triton
    import triton.language as tl
    if not torch.cuda.is_available():
        fail("needs a CUDA GPU (torch.cuda.is_available() is False)")
    props = torch.cuda.get_device_properties(0)
    l2_bytes = int(props.L2_cache_size)
    policy = cfg["timing"]
    flush = bool(policy["flush_l2"])
    timer = Timer(torch, l2_bytes, policy)
    seed_kernel = make_triton_seed(triton, tl)

    # torch's own copy bandwidth, the same way (1 GiB each way, bytes read + written).
    src = torch.zeros(COPY_CEILING_BYTES // 4, device="cuda")
    dst = torch.empty_like(src)
    copy_t, _ = timer.measure(lambda sets: (lambda i: dst.copy_(src)), 2 * COPY_CEILING_BYTES, flush)
    copy_GBps = 2 * COPY_CEILING_BYTES / copy_t["median_s"] / 1e9
    del src, dst

    records = []
    problems = [(t, m, n) for t in cfg["dtypes"] for (m, n) in cfg["expanded_shapes"]]
    pad = int(cfg["row_pad"])
    total, done = len(problems) * len(kernels), 0
    for dtype_name, M, N in problems:
        ld = N + pad
        x = None
        for kernel in kernels:
            done += 1
            # torch.softmax returns a new, dense y whatever x's stride: its record says so (ld_y =
            # N), so a padded shape's torch record is not the padded problem the others solve
            # (scripts/tables.py marks it). The Triton seed writes the padded y.
            ld_y = N if kernel == "torch.softmax" else ld
            rec = {"kernel": kernel, "dtype": dtype_name, "M": M, "N": N, "ld_x": ld, "ld_y": ld_y,
                   "status": "ok", "reason": "",
                   "model": null_model("peer: not modelled by peers.py")}
            block = triton.next_power_of_2(N)
            if dtype_name not in DTYPES:
                rec.update(status="skipped", reason=f"peers.py does not know dtype {dtype_name}")
            elif kernel == "triton.fused" and block > MAX_TRITON_BLOCK:
                rec.update(status="skipped",
                           reason=f"row too long for one Triton tile: N = {N} needs BLOCK_SIZE = {block} "
                                  f"> {MAX_TRITON_BLOCK}")
            elif 4 * M * ld * 3 + 5 * max(VERIFY_CHUNK_BYTES, 8 * N) > torch.cuda.mem_get_info()[0]:
                rec.update(status="skipped", reason="does not fit in device memory (x, y, reference)")
            if rec["status"] != "ok":
                records.append(rec)
                continue
            if not args.quiet:
                print(f"\r\x1b[K{done}/{total} {kernel} {M}x{N}", end="", file=sys.stderr, flush=True)
            tname, elem = DTYPES[dtype_name]
            tdtype = getattr(torch, tname)
            if x is None:
                x = make_input(torch, M, N, ld, int(cfg["seed"]), tdtype)

            def make_launch(sets, kernel=kernel, block=block, x=x):
                xs = [x] + [x.clone() for _ in range(sets - 1)]
                if kernel == "torch.softmax":
                    return lambda i: torch.softmax(xs[i], dim=-1)
                ys = [torch.empty((M, ld), device="cuda", dtype=tdtype)[:, :N] for _ in range(sets)]
                warps = num_warps_for(block)
                return lambda i: seed_kernel[(M,)](ys[i], xs[i], xs[i].stride(0), ys[i].stride(0), N,
                                                  BLOCK_SIZE=block, num_warps=warps)

            try:
                if kernel == "torch.softmax":
                    y = torch.softmax(x, dim=-1)
                else:
                    y = torch.full((M, ld), float("nan"), device="cuda", dtype=tdtype)[:, :N]  # poisoned
                    seed_kernel[(M,)](y, x, x.stride(0), y.stride(0), N, BLOCK_SIZE=block,
                                      num_warps=num_warps_for(block))
                torch.cuda.synchronize()
                rec["verify"] = verify(torch, x, y, *judged_by(settings, dtype_name))
                del y
                if not rec["verify"]["passed"]:
                    rec.update(status="failed", reason="verification failed: " + rec["verify"]["detail"])
                    records.append(rec)
                    continue
                stats, plan = timer.measure(make_launch, 2 * elem * M * ld, flush)
            except Exception as e:  # noqa: BLE001 -- one peer's failure is recorded, the sweep goes on
                rec.update(status="failed", reason=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                records.append(rec)
                torch.cuda.empty_cache()
                continue
            rec["time"] = stats
            rec["effective_GBps"] = 2 * M * N * elem / stats["median_s"] / 1e9
            rec["pct_of_copy"] = rec["effective_GBps"] / copy_GBps * 100
            extra = {"timing": plan, "torch": torch.__version__, "triton": triton.__version__}
            if kernel == "triton.fused":
                extra.update(BLOCK_SIZE=block, num_warps=num_warps_for(block))
            rec["extra"] = extra
            records.append(rec)
        del x
        torch.cuda.empty_cache()
    if not args.quiet:
        print("\r\x1b[K", end="", file=sys.stderr)
    if args.counters:
        del timer
        torch.cuda.empty_cache()  # the children need the device memory
        count_peer_bytes(records, int(cfg["seed"]), args.quiet)

    doc = {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "tool_version": "scripts/peers.py",
        "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(["scripts/peers.py"] + sys.argv[1:]),
        "complete": True,
        "config": {"source": args.config, "name": cfg.get("name", ""),
                   "shapes": [list(s) for s in cfg["expanded_shapes"]], "dtypes": cfg["dtypes"],
                   "row_pad": pad, "timing": policy, "verify": {"tolerance": float(settings["tolerance"])},
                   "seed": cfg["seed"]},
        "device": {"name": props.name, "sm_count": props.multi_processor_count, "l2_bytes": l2_bytes,
                   "global_bytes": props.total_memory, "torch": torch.__version__,
                   "triton": triton.__version__, "cuda": torch.version.cuda},
        "ceilings": {"source": "measured", "device": props.name, "dram_GBps": copy_GBps,
                     "peak_dram_GBps": None, "fp32_GFLOPs": None, "l2_bytes": l2_bytes,
                     "sm_count": props.multi_processor_count},
        "records": records,
        "claims": None,
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    if not args.quiet:
        ok = sum(r["status"] == "ok" for r in records)
        print(f"{len(records)} peer records ({ok} ok) in {args.out}; torch copy_ {copy_GBps:.0f} GB/s")


if __name__ == "__main__":
    main()
