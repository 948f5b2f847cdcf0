#!/usr/bin/env python3
"""What device code a built library or binary carries, and whether its pre-Hopper images are free of
Hopper-only code (clusters, distributed shared memory, mbarrier transactions, bulk copies).

    scripts/fatbin-check.py FILE                 the listing: one line per image, as
                                                 `cuobjdump --list-elf --list-ptx` writes it
    scripts/fatbin-check.py FILE --check 75,80,86,89,90,100,120 [--ptx 120]
        also checks that every listed architecture has SASS (and --ptx's has PTX), and that no
        SASS image below sm_90 has a cluster, mbarrier-transaction, bulk-copy or TMA instruction
        while the sm_90 image has them (the check's own control: it can see them); a PTX image
        below compute_90 (--ptx 80: the 80-virtual build) is grepped for the same in PTX
        (HOPPER_PTX). Exit 1 on a failed check, naming it.

FILE: a static library (.a), an object, a shared library or an executable. With the CUDA toolkit's
cuobjdump (on PATH or in /usr/local/cuda/bin) the listing and the instructions are cuobjdump's
(`--list-elf`, `--list-ptx`, `-sass`). Without it (a toolkit without cuobjdump and nvdisasm), the
fatbins are read here: the host ELF's .nv_fatbin sections, their images (kind, architecture), and
in each SASS image (an ELF of its own; the zstd-compressed ones through the zstd command) the size
of every kernel's code section; the Hopper-only kernels (HOPPER_KERNELS) must then be a trap alone below sm_90 (at most
TRAP_BYTES of code) and real code at sm_90. `--tool` says which was used.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # nvcc 13 compresses large images (and PTX) with zstd
# SASS of sm_90 and later that no earlier architecture has: cluster barriers (UCGABAR_*,
# CGAERRBAR), mbarrier operations (SYNCS.*), bulk copies and prefetches (UBLKCP, UBLKPF, UBLKRED),
# the tensor memory accelerator (UTMA*), fence.proxy.async (FENCE.VIEW.ASYNC).
HOPPER_SASS = re.compile(r"\b(UCGABAR\w*|CGAERRBAR|SYNCS\.[\w.]+|UBLK\w+|UTMA\w+|FENCE\.VIEW\.ASYNC)")
# The same in PTX: cluster barriers and registers, distributed shared memory, mbarrier, bulk copies,
# the async proxy's fence, elect.
HOPPER_PTX = re.compile(r"barrier\.cluster|mbarrier|cp\.async\.bulk|fence\.proxy\.async|\bmapa\b|"
                        r"%cluster|elect\.sync")
# The kernels built only for sm_90 and later (src/kernels/common/arch.cuh): their names as they
# appear in the mangled symbols.
HOPPER_KERNELS = ("cluster_row_kernel", "cluster_tile_kernel", "block_hybrid_kernel",
                  "split_row_kernel", "split_row_ring_kernel", "split_row_pipelined_kernel")
# A kernel whose body is SMR_ARCH_UNSUPPORTED() alone: a trap and an exit, a few instructions.
TRAP_BYTES = 256


def find_tool(name):
    path = shutil.which(name)
    if path:
        return path
    candidate = os.path.join("/usr/local/cuda/bin", name)
    return candidate if os.access(candidate, os.X_OK) else None


# --- reading fatbins without the toolkit ---------------------------------------------------------

def ar_members(data):
    """(name, bytes) of each member of a System V / GNU ar archive."""
    if not data.startswith(b"!<arch>\n"):
        return [("", data)]
    out, pos, names = [], 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode("ascii", "replace").strip()
        size = int(header[48:58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        if name == "//":
            names = body
        elif name not in ("/", "/SYM64/"):
            if name.startswith("/") and name[1:].isdigit():
                off = int(name[1:])
                name = names[off:names.index(b"/\n", off)].decode()
            out.append((name.rstrip("/"), body))
        pos += 60 + size + (size & 1)
    return out


def elf_sections(data):
    """{name: (offset, size)} of a little-endian ELF64 file's sections."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    str_off, str_size = headers[shstrndx][4], headers[shstrndx][5]
    names = data[str_off:str_off + str_size]
    out = {}
    for name_off, _type, _flags, _addr, offset, size in headers:
        name = names[name_off:names.index(b"\0", name_off)].decode("ascii", "replace")
        out[name] = (offset, size)
    return out


def fatbin_images(blob):
    """(kind, arch, compressed, payload) of every image of the fatbins in `blob`."""
    images, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # containers are 8-byte aligned, padding between them
            continue
        entry, end = pos + header_size, pos + header_size + size
        while entry + 64 <= end:
            kind, _u, ehead, esize, compressed_size = struct.unpack_from("<HHIQI", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            payload = blob[entry + ehead:entry + ehead + esize]
            if compressed_size:
                payload = payload[:compressed_size]
            images.append((kind, arch, compressed_size != 0, payload))
            entry += ehead + esize
        pos = end
    return images


def read_images(path):
    """[(member, kind, arch, compressed, payload)] of a file's device images."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    for member, body in ar_members(data):
        sections = elf_sections(body)
        for name, (offset, size) in sections.items():
            if name == ".nv_fatbin":
                for image in fatbin_images(body[offset:offset + size]):
                    out.append((member, *image))
    return out


def decompress(payload):
    """A compressed image's bytes (zstd, through the zstd command), or None where it cannot be."""
    zstd = shutil.which("zstd")
    if not payload.startswith(ZSTD_MAGIC) or not zstd:
        return None
    r = subprocess.run([zstd, "-d", "-c", "-q"], input=payload, capture_output=True)
    return r.stdout if r.returncode == 0 else None


def kernel_code_sizes(cubin):
    """{mangled kernel name: code bytes} of one SASS image (its .text.NAME sections)."""
    return {name[len(".text."):]: size for name, (_o, size) in elf_sections(cubin).items()
            if name.startswith(".text.")}


# --- the listing and the checks ------------------------------------------------------------------

def listing_own(images, base):
    lines, n_elf, n_ptx = [], 0, 0
    for member, kind, arch, _c, _p in images:
        stem = f"{base}:{member}" if member else base
        if kind == KIND_ELF:
            n_elf += 1
            lines.append(f"ELF file {n_elf:4}: {stem}.sm_{arch}.cubin")
        elif kind == KIND_PTX:
            n_ptx += 1
            lines.append(f"PTX file {n_ptx:4}: {stem}.sm_{arch}.ptx")
    return lines


def archs_in(lines, kind):
    return {int(m) for line in lines if line.startswith(kind)
            for m in re.findall(r"\.sm_(\d+)[a-z]?\.(?:cubin|ptx)", line)}


def sass_by_arch(cuobjdump, path):
    """{arch: SASS text} from cuobjdump -sass."""
    text = subprocess.run([cuobjdump, "-sass", path], capture_output=True, text=True,
                          check=True).stdout
    out, arch = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*arch = sm_(\d+)", line)
        if m:
            arch = int(m.group(1))
            continue
        if arch is not None:
            out.setdefault(arch, []).append(line)
    return {a: "\n".join(v) for a, v in out.items()}


def check_instructions_cuobjdump(cuobjdump, path, archs):
    problems, notes = [], []
    sass = sass_by_arch(cuobjdump, path)
    for arch in sorted(a for a in archs if a in sass):
        found = sorted(set(HOPPER_SASS.findall(sass[arch])))
        if arch < 90 and found:
            problems.append(f"sm_{arch} SASS has Hopper-only instructions: {' '.join(found[:8])}")
        notes.append(f"sm_{arch}: {' '.join(found[:8]) if found else 'no Hopper-only instruction'}")
    if 90 in archs and not HOPPER_SASS.search(sass.get(90, "")):
        problems.append("sm_90 SASS has no cluster/mbarrier/bulk instruction: the check sees nothing")
    return problems, notes


def ptx_by_member_cuobjdump(cuobjdump, path, base):
    """{(member, arch): PTX text} from cuobjdump -ptx (which reads compressed images too)."""
    text = subprocess.run([cuobjdump, "-ptx", path], capture_output=True, text=True,
                          check=True).stdout
    out, member, arch = {}, base, None
    for line in text.splitlines():
        m = re.match(r"member \S*?:([^:]+):?\s*$", line)
        if m:
            member, arch = m.group(1), None
            continue
        m = re.match(r"\s*arch = sm_(\d+)", line)
        if m:
            arch = int(m.group(1))
            continue
        if arch is not None:
            out.setdefault((member, arch), []).append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def check_ptx_cuobjdump(cuobjdump, path, archs, base):
    """As check_ptx_own, on cuobjdump -ptx's text."""
    problems, notes = [], []
    ptx = ptx_by_member_cuobjdump(cuobjdump, path, base)
    for (member, arch), text in sorted(ptx.items()):
        if arch not in archs or arch >= 90:
            continue
        found = sorted(set(HOPPER_PTX.findall(text)))
        if found:
            problems.append(f"compute_{arch} PTX of {member} has Hopper-only instructions: "
                            f"{' '.join(found)}")
        notes.append(f"compute_{arch} PTX of {member}: "
                     f"{' '.join(found) if found else 'no Hopper-only instruction'}")
    if any(a < 90 for a in archs) and not notes:
        problems.append("cuobjdump -ptx gave no PTX text to check")
    return problems, notes


def check_kernels_own(images, archs):
    problems, notes = [], []
    sizes = {}
    for _m, kind, arch, compressed, payload in images:
        if kind != KIND_ELF or arch not in archs:
            continue
        if compressed:
            payload = decompress(payload)
            if payload is None:
                problems.append(f"sm_{arch}: a compressed SASS image that cannot be decompressed "
                                "here (zstd missing?): use cuobjdump")
                continue
        for name, size in kernel_code_sizes(payload).items():
            if any(k in name for k in HOPPER_KERNELS):
                sizes.setdefault(arch, []).append((size, name))
    for arch in sorted(archs):
        got = sizes.get(arch, [])
        if not got:
            problems.append(f"sm_{arch}: no Hopper-only kernel found in its SASS")
            continue
        largest = max(got)
        if arch < 90 and largest[0] > TRAP_BYTES:
            problems.append(f"sm_{arch}: {largest[1]} has {largest[0]} bytes of code (more than a "
                            f"trap, {TRAP_BYTES})")
        if arch >= 90 and max(got)[0] <= TRAP_BYTES:
            problems.append(f"sm_{arch}: the Hopper-only kernels are no bigger than a trap")
        notes.append(f"sm_{arch}: {len(got)} Hopper-only kernels, code {min(got)[0]}..{largest[0]} "
                     "bytes")
    return problems, notes


def check_ptx_own(images, archs, base):
    """PTX images below compute_90 (the listed `archs`) free of Hopper-only instructions."""
    problems, notes = [], []
    for member, kind, arch, compressed, payload in images:
        member = member or base
        if kind != KIND_PTX or arch not in archs or arch >= 90:
            continue
        text = decompress(payload) if compressed else payload
        if text is None:
            problems.append(f"compute_{arch} PTX of {member}: compressed, cannot be read here")
            continue
        found = sorted(set(HOPPER_PTX.findall(text.decode("ascii", "replace"))))
        if found:
            problems.append(f"compute_{arch} PTX of {member} has Hopper-only instructions: "
                            f"{' '.join(found)}")
        notes.append(f"compute_{arch} PTX of {member}: "
                     f"{' '.join(found) if found else 'no Hopper-only instruction'}")
    return problems, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--check", help="architectures that must have SASS, e.g. 75,80,86,89,90")
    ap.add_argument("--ptx", help="architectures that must have PTX, e.g. 120")
    ap.add_argument("--tool", choices=("auto", "cuobjdump", "own"), default="auto",
                    help="cuobjdump where there is one (auto), or the reader here (own)")
    args = ap.parse_args()
    if not os.path.isfile(args.file):
        print(f"fatbin-check: {args.file}: no such file", file=sys.stderr)
        return 2
    cuobjdump = find_tool("cuobjdump") if args.tool != "own" else None
    if args.tool == "cuobjdump" and not cuobjdump:
        print("fatbin-check: cuobjdump not found (PATH, /usr/local/cuda/bin)", file=sys.stderr)
        return 2
    base = os.path.basename(args.file)
    if cuobjdump:
        print(f"# {base}: cuobjdump --list-elf --list-ptx ({cuobjdump})")
        lines = []
        for flag in ("--list-elf", "--list-ptx"):
            r = subprocess.run([cuobjdump, flag, args.file], capture_output=True, text=True)
            lines += [l for l in r.stdout.splitlines() if l.strip()]
        images = None
    else:
        print(f"# {base}: fatbin images read by scripts/fatbin-check.py (no cuobjdump)")
        images = read_images(args.file)
        lines = listing_own(images, base)
    print("\n".join(lines))
    if not args.check and not args.ptx:
        return 0

    want = {int(a) for a in (args.check or "").split(",") if a}
    want_ptx = {int(a) for a in (args.ptx or "").split(",") if a}
    problems = []
    have_elf, have_ptx = archs_in(lines, "ELF"), archs_in(lines, "PTX")
    problems += [f"sm_{a}: no SASS image" for a in sorted(want - have_elf)]
    problems += [f"compute_{a}: no PTX image" for a in sorted(want_ptx - have_ptx)]
    if cuobjdump:
        p, notes = check_instructions_cuobjdump(cuobjdump, args.file, want & have_elf)
    elif want:
        p, notes = check_kernels_own(images, want & have_elf)
    else:
        p, notes = [], []
    problems += p
    # PTX below compute_90 (an 80-virtual build): cuobjdump -ptx where there is cuobjdump (it
    # reads every compression), else the images read here (zstd-compressed ones through zstd).
    if cuobjdump:
        p, ptx_notes = check_ptx_cuobjdump(cuobjdump, args.file, want_ptx & have_ptx, base)
    else:
        p, ptx_notes = check_ptx_own(read_images(args.file), want_ptx & have_ptx, base)
    problems += p
    notes += ptx_notes
    print(f"# SASS for: {' '.join(f'sm_{a}' for a in sorted(have_elf))}; "
          f"PTX for: {' '.join(f'compute_{a}' for a in sorted(have_ptx)) or 'none'}")
    for note in notes:
        print(f"# {note}")
    for problem in problems:
        print(f"fatbin-check: {base}: {problem}", file=sys.stderr)
    print(f"# check: {'FAILED' if problems else 'passed'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
