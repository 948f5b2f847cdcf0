#!/usr/bin/env python3
"""Tests of scripts/fatbin-check.py: the images a build carries and its pre-Hopper images' code.

Two kinds: the reader and the checks on small fatbins made here (always run), and the portable
build's kernels library itself (build/portable, `cmake --build --preset portable --target
smr_kernels`; scripts/test builds it on a machine without a GPU), skipped -- visibly, with the
reason -- where that build is absent.
"""
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "fatbin-check.py"
PORTABLE_LIB = pathlib.Path(os.environ.get(
    "SMR_PORTABLE_LIB", ROOT / "build" / "portable" / "src" / "kernels" / "libsmr_kernels.a"))


def elf(sections):
    """A little-endian ELF64 file with the named sections (name -> bytes), enough for the reader."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in sections) + b".shstrtab\0"
    body, offsets, pos = b"", [], 64
    for data in list(sections.values()) + [names]:
        offsets.append((pos + len(body), len(data)))
        body += data + b"\0" * (-len(data) % 8)
    shoff = 64 + len(body)
    header = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                          len(sections) + 2, len(sections) + 1)
    shdrs = b"\0" * 64
    name_off = 1
    for (name, _), (off, size) in zip(list(sections.items()) + [(".shstrtab", b"")], offsets):
        shdrs += struct.pack("<IIQQQQIIQQ", name_off, 1, 0, 0, off, size, 0, 0, 1, 0)
        name_off += len(name) + 1
    return header + body + shdrs


def fatbin(images):
    """A fatbin of (kind, arch, payload) images (kind 2: SASS, an ELF; 1: PTX); a payload of
    bytes(zstd frame) stands for a compressed image, as nvcc 13 writes the large ones."""
    entries = b""
    for kind, arch, payload in images:
        compressed = len(payload) if payload.startswith(b"\x28\xb5\x2f\xfd") else 0
        payload += b"\0" * (-len(payload) % 8)
        head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x101, 64, len(payload), compressed, 0, 8, 0,
                           arch, 0, 0, 0x11, 0, len(payload))
        entries += head + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(entries)) + entries


def cubin(kernels):
    """A SASS image whose kernels (mangled name -> code bytes) have code sections that long."""
    return elf({f".text.{name}": b"\0" * size for name, size in kernels.items()})


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True)


CLUSTER = "_ZN3smr4prod18cluster_row_kernelIfLb0EEEvPKfPflllbbb"
LAB = "_ZN3smr13online_kernelILi1024EEEvPKfllPfl"


class OwnReader(unittest.TestCase):
    def object_with(self, images):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = pathlib.Path(d) / "k.o"
        path.write_bytes(elf({".text": b"\x90" * 16, ".nv_fatbin": fatbin(images)}))
        return path

    def test_lists_every_image(self):
        path = self.object_with([(2, 75, cubin({LAB: 512})), (2, 90, cubin({LAB: 512})),
                                 (1, 90, b".version 8.0\n")])
        r = run(path, "--tool", "own")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ELF file    1: k.o.sm_75.cubin", r.stdout)
        self.assertIn("ELF file    2: k.o.sm_90.cubin", r.stdout)
        self.assertIn("PTX file    1: k.o.sm_90.ptx", r.stdout)

    def good(self):
        return [(2, 75, cubin({LAB: 4096, CLUSTER: 128})), (2, 90, cubin({LAB: 4096, CLUSTER: 9000})),
                (1, 90, b"ptx")]

    def test_trap_below_sm90_and_code_at_sm90_passes(self):
        r = run(self.object_with(self.good()), "--tool", "own", "--check", "75,90", "--ptx", "90")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("# check: passed", r.stdout)

    def test_cluster_code_below_sm90_fails(self):
        images = self.good()
        images[0] = (2, 75, cubin({LAB: 4096, CLUSTER: 9000}))
        r = run(self.object_with(images), "--tool", "own", "--check", "75,90")
        self.assertEqual(r.returncode, 1)
        self.assertIn("sm_75: " + CLUSTER + " has 9000 bytes of code", r.stderr)

    def test_trap_at_sm90_fails_the_control(self):
        images = self.good()
        images[1] = (2, 90, cubin({LAB: 4096, CLUSTER: 128}))
        r = run(self.object_with(images), "--tool", "own", "--check", "75,90")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no bigger than a trap", r.stderr)

    def test_missing_architecture_and_ptx_fail(self):
        r = run(self.object_with(self.good()), "--tool", "own", "--check", "75,86,90", "--ptx", "120")
        self.assertEqual(r.returncode, 1)
        self.assertIn("sm_86: no SASS image", r.stderr)
        self.assertIn("compute_120: no PTX image", r.stderr)

    @unittest.skipUnless(shutil.which("zstd"), "no zstd command: compressed images not read")
    def test_compressed_images_are_read(self):
        def zstd(data):
            return subprocess.run(["zstd", "-c", "-q"], input=data, capture_output=True,
                                  check=True).stdout
        images = self.good()
        images[1] = (2, 90, zstd(cubin({LAB: 4096, CLUSTER: 9000})))
        r = run(self.object_with(images), "--tool", "own", "--check", "75,90")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        images[0] = (2, 75, zstd(cubin({LAB: 4096, CLUSTER: 9000})))
        r = run(self.object_with(images), "--tool", "own", "--check", "75,90")
        self.assertEqual(r.returncode, 1)
        self.assertIn("sm_75: " + CLUSTER + " has 9000 bytes of code", r.stderr)

    def test_ptx_below_compute_90_without_hopper_instructions(self):
        clean = b".target sm_80\n.entry k() { trap; }\n"
        r = run(self.object_with([(1, 80, clean)]), "--tool", "own", "--ptx", "80")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cluster = clean + b"barrier.cluster.arrive;\ncp.async.bulk.prefetch.L2.global [%rd1], 16;\n"
        r = run(self.object_with([(1, 80, cluster)]), "--tool", "own", "--ptx", "80")
        self.assertEqual(r.returncode, 1)
        self.assertIn("compute_80 PTX of k.o has Hopper-only instructions: barrier.cluster "
                      "cp.async.bulk", r.stderr)

    def fake_cuobjdump(self, ptx_text):
        """A directory with a cuobjdump that lists one compute_80 PTX image and prints ptx_text
        for -ptx (the real one's layout: a member line, then arch = sm_80, then the PTX)."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        (pathlib.Path(d) / "ptx.txt").write_text(ptx_text)
        tool = pathlib.Path(d) / "cuobjdump"
        tool.write_text("#!/bin/sh\n"
                        'case "$1" in\n'
                        "  --list-elf) ;;\n"
                        "  --list-ptx) echo 'PTX file    1: k.sm_80.ptx' ;;\n"
                        f"  -ptx) cat {d}/ptx.txt ;;\n"
                        "esac\n")
        tool.chmod(0o755)
        return d

    def test_ptx_below_compute_90_through_cuobjdump(self):
        # Compressed PTX the reader here cannot open (a GPU machine without zstd): cuobjdump -ptx
        # prints it, and that text is what is checked.
        head = "member libx.a:{}:\n\nFatbin ptx code:\n================\narch = sm_80\n"
        clean = head.format("k.o") + ".target sm_80\n.entry k() { trap; }\n"
        obj = self.object_with([(1, 80, b"\x28\xb5\x2f\xfd not a frame")])
        env = dict(os.environ)
        env["PATH"] = self.fake_cuobjdump(clean) + os.pathsep + env["PATH"]
        r = subprocess.run([sys.executable, str(SCRIPT), str(obj), "--tool", "cuobjdump",
                            "--ptx", "80"], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("compute_80 PTX of k.o: no Hopper-only instruction", r.stdout)
        bad = clean + head.format("split_row.cu.o") + "mbarrier.try_wait.parity.b64 p, [%rd1], 0;\n"
        env["PATH"] = self.fake_cuobjdump(bad) + os.pathsep + os.environ["PATH"]
        r = subprocess.run([sys.executable, str(SCRIPT), str(obj), "--tool", "cuobjdump",
                            "--ptx", "80"], capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("compute_80 PTX of split_row.cu.o has Hopper-only instructions: mbarrier",
                      r.stderr)

    def test_missing_file_is_an_error(self):
        r = run("/nonexistent/libx.a")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no such file", r.stderr)


def portable_architectures():
    """The portable preset's SASS and PTX architectures for this toolkit (the rule of
    cmake/CudaArchitectures.cmake)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    listed = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True).stdout
    archs = [a for a in (75, 80, 86, 89, 90, 100, 120)
             if re.search(rf"compute_{a}\b", listed) or (not listed and a <= 90)]
    return archs, archs[-1]


@unittest.skipUnless(PORTABLE_LIB.is_file(),
                     f"no portable build at {PORTABLE_LIB} (cmake --preset portable; cmake --build "
                     "--preset portable --target smr_kernels)")
class PortableBuild(unittest.TestCase):
    def check(self, tool):
        archs, newest = portable_architectures()
        r = run(PORTABLE_LIB, "--tool", tool, "--check", ",".join(map(str, archs)),
                "--ptx", newest)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for a in archs:
            self.assertRegex(r.stdout, rf"ELF file +\d+: .*sm_{a}\.cubin")

    def test_every_architecture_and_no_hopper_code_below_sm90_own_reader(self):
        self.check("own")

    @unittest.skipUnless(shutil.which("cuobjdump") or os.access("/usr/local/cuda/bin/cuobjdump",
                                                                os.X_OK),
                         "no cuobjdump in this toolkit: the SASS instructions are not grepped")
    def test_no_cluster_instruction_below_sm90_cuobjdump(self):
        self.check("cuobjdump")


if __name__ == "__main__":
    unittest.main()
