"""The lab's text against the code: every name, file and command docs/lab/ quotes must exist.

- Names: a code span that is a kernel, function or type name (`exp_sum_kernel`,
  `with_fused_tile`, `fused_row_kernel<1024, 128>`, `block_max<kThreads>(v)`, `FusedTiles`: an
  identifier with an underscore or a capital inside, or followed by template arguments or a call)
  must occur as a word in src/.
- Files: a link target, a path under src/, tests/, scripts/, configs/, docs/ or results/, and a
  file name such as unfused_3pass.cu must name a file of the repository.
- Commands: a line (or a code span) that starts with softmax-bench, build/.../softmax-bench or
  scripts/ must parse with the current CLI. softmax-bench commands run for real with the GPU
  hidden (CUDA_VISIBLE_DEVICES=""), in a scratch directory that sees the repository's configs/
  and results/: every input is checked before the GPU is asked for (docs/cli.md), so a command
  that parses exits 0 or 3 (needs a GPU), one that does not exits 2 with its reason; `model --out
  DIR` runs as `model --print-only`, so nothing is written. A command for a lab build
  (build/lab*/...) runs on the lab binary when there is one, and is otherwise skipped when the
  release binary's only objection is the lab-only kernel. scripts/ commands: the script exists,
  and a Python script's --help succeeds and lists every --flag the command uses.

The binaries: SMR_BENCH (default build/release/src/harness/softmax-bench) and SMR_LAB_BENCH
(default build/lab/src/harness/softmax-bench); without the release binary the command checks are
skipped visibly.
"""
import os
import re
import shlex
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "docs" / "lab"

SPAN = re.compile(r"`([^`\n]+)`")
SPAN_NAME = re.compile(r"^(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)(<[^>]*>)?(\(.*\))?$")
LINK = re.compile(r"\]\(([^)#\s]+)")
PATH = re.compile(r"(?<![\w./-])((?:src|tests|scripts|configs|docs|results)/[^\s()\]`'\",;:]*)")
FILE_NAME = re.compile(r"(?<![\w./-])([\w-]+\.(?:cu|cuh|hpp|cpp|py|yaml))(?!\w)")
COMMAND = re.compile(r"^(?:softmax-bench|build/[\w.-]+/src/harness/softmax-bench|scripts/)\S*")
# Words that stand for a value the reader chooses: such a command is a template, not checked.
PLACEHOLDER = re.compile(r"\b(?:CONFIG|DIR|FILE|RESULTS\.json|REGEX|NN)\b|\.\.\.|<[a-z]")


def lab_pages():
    return sorted(LAB.glob("*.md")) + sorted((LAB / "answers").glob("*.md"))


def page_text(path):
    # The generated number spans (<!-- num:... -->) are data, not text to check.
    return re.sub(r"<!--.*?-->", "", path.read_text(encoding="utf-8"), flags=re.S)


def repo_files():
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        files = {f for f in out.split("\n") if f}
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the tree, less outputs
        skip = {".git", "build", "runs", "node_modules"}
        files = set()
        for top, subdirs, names in os.walk(ROOT):
            subdirs[:] = [d for d in subdirs if d not in skip]
            files.update(os.path.relpath(os.path.join(top, n), ROOT) for n in names)
    dirs = set()
    for f in files:
        p = Path(f).parent
        while str(p) != ".":
            dirs.add(str(p))
            p = p.parent
    return files, dirs


def source_words():
    words = set()
    for p in (ROOT / "src").rglob("*"):
        if p.is_file() and p.suffix in (".cu", ".cuh", ".hpp", ".cpp", ".h"):
            words.update(re.findall(r"[A-Za-z_]\w*", p.read_text(encoding="utf-8")))
    return words


def quoted_names(text):
    """(name, span) for every code span that reads as a kernel, function or type name."""
    for m in SPAN.finditer(text):
        span = m.group(1).strip()
        n = SPAN_NAME.match(span)
        if not n:
            continue
        name, template, call = n.groups()
        inner = name.strip("_")
        if "_" in inner or re.search(r"[a-z][A-Z]", inner) or template or call:
            yield name, span


def quoted_commands(text):
    """Every command line (continuation lines joined) or code span that starts like a command."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if COMMAND.match(line):
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            yield line
        i += 1
    for m in SPAN.finditer(text):
        if COMMAND.match(m.group(1).strip()):
            yield m.group(1).strip()


def binary(env, default):
    p = Path(os.environ.get(env, ROOT / default))
    return p if p.is_file() and os.access(p, os.X_OK) else None


class NamesAndFiles(unittest.TestCase):
    def test_quoted_names_exist_in_src(self):
        words = source_words()
        missing = [f"{page.relative_to(ROOT)}: `{span}` ({name} is not in src/)"
                   for page in lab_pages() for name, span in quoted_names(page_text(page))
                   if name not in words]
        self.assertEqual(missing, [], "\n" + "\n".join(missing))

    def test_quoted_files_exist(self):
        files, dirs = repo_files()
        names = {Path(f).name for f in files}
        missing = []
        for page in lab_pages():
            text = page_text(page)
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue
                rel = os.path.relpath((page.parent / target).resolve(), ROOT)
                if rel not in files and rel not in dirs:
                    missing.append(f"{page.relative_to(ROOT)}: link {target}")
            for m in PATH.finditer(text):
                path = m.group(1).rstrip("./")
                if re.search(r"[*\[$]|NN|\.\.\.", path):  # a pattern: lab-0[1-6]-*.yaml, lab-NN-*
                    continue
                if path not in files and path not in dirs:
                    missing.append(f"{page.relative_to(ROOT)}: path {path}")
            for m in FILE_NAME.finditer(text):
                if m.group(1) not in names:
                    missing.append(f"{page.relative_to(ROOT)}: file {m.group(1)}")
        self.assertEqual(missing, [], "\n" + "\n".join(missing))

    def test_the_checks_find_what_they_check(self):
        # The extraction itself: if it stopped finding the lab's names, files and commands, the
        # tests above would pass on anything.
        text = "".join(page_text(p) for p in lab_pages())
        names = {n for n, _ in quoted_names(text)}
        self.assertTrue({"row_max_kernel", "exp_sum_kernel", "normalize_kernel", "block_max",
                         "exp_reference", "FusedTiles"} <= names, names)
        self.assertIn("row_block.cuh", {m.group(1) for m in FILE_NAME.finditer(text)})
        self.assertIn("src/kernels/lab/unfused_3pass.cu", {m.group(1) for m in PATH.finditer(text)})
        commands = list(quoted_commands(text))
        self.assertTrue(any(c.startswith("build/release/src/harness/softmax-bench run")
                            for c in commands), commands)
        self.assertTrue(any(c.startswith("scripts/lab-counters.py") for c in commands), commands)
        self.assertNotIn("exp_kernel", source_words())  # the planted-name check below relies on it
        planted = "For kernel B (`exp_kernel`), see `unfused_3pass.cu`."
        self.assertIn(("exp_kernel", "exp_kernel"), list(quoted_names(planted)))


class Commands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bench = binary("SMR_BENCH", "build/release/src/harness/softmax-bench")
        cls.lab_bench = binary("SMR_LAB_BENCH", "build/lab/src/harness/softmax-bench")
        cls.scratch = tempfile.TemporaryDirectory()
        for d in ("configs", "results"):
            os.symlink(ROOT / d, Path(cls.scratch.name) / d)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def commands(self):
        for page in lab_pages():
            for c in quoted_commands(page_text(page)):
                yield page.relative_to(ROOT), c

    def bench_args(self, args):
        """The arguments to run instead: `model --out DIR` prints only, so nothing is written."""
        if args and args[0] == "model" and "--out" in args:
            i = args.index("--out")
            args = args[:i] + ["--print-only"] + args[i + 2:]
        return args

    def check_bench(self, where, command, words):
        lab = words[0].startswith("build/lab")
        exe = self.lab_bench if lab and self.lab_bench else self.bench
        args = self.bench_args(words[1:])
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        r = subprocess.run([str(exe)] + args, cwd=self.scratch.name, env=env, capture_output=True,
                           text=True, timeout=120)
        if lab and exe == self.bench and r.returncode == 2 and "SMR_BUILD_LAB=ON" in r.stderr:
            return f"{where}: needs the lab build, not checked: {command}"
        self.assertIn(r.returncode, (0, 3),
                      f"\n{where}: `{command}` does not parse with the current CLI "
                      f"(exit {r.returncode}): {r.stderr.strip()}")
        return None

    def check_script(self, where, command, words):
        script = ROOT / words[0]
        self.assertTrue(script.is_file(), f"\n{where}: `{command}`: no {words[0]}")
        flags = [w.split("=")[0] for w in words[1:] if w.startswith("--")]
        if script.suffix == ".py":
            r = subprocess.run(["python3", str(script), "--help"], cwd=ROOT, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 0, f"\n{where}: {words[0]} --help: {r.stderr}")
            known = r.stdout
        else:
            known = script.read_text(encoding="utf-8")
        for f in flags:
            self.assertRegex(known, re.escape(f) + r"\b",
                             f"\n{where}: `{command}`: {words[0]} has no option {f}")
        for w in words[1:]:
            if re.match(r"(configs|results)/", w):
                self.assertTrue((ROOT / w).exists(), f"\n{where}: `{command}`: no {w}")

    def test_quoted_commands_parse(self):
        if self.bench is None:
            self.skipTest("no softmax-bench: build build/release (or set SMR_BENCH) to check the "
                          "lab's commands")
        skipped, checked = [], 0
        for where, command in self.commands():
            if PLACEHOLDER.search(command):
                continue
            words = shlex.split(command, comments=True)
            with self.subTest(command=command):
                if words[0].startswith("scripts/"):
                    self.check_script(where, command, words)
                else:
                    note = self.check_bench(where, command, words)
                    if note:
                        skipped.append(note)
                checked += 1
        self.assertGreater(checked, 10)
        if skipped:
            print("\n" + "\n".join(skipped))


if __name__ == "__main__":
    unittest.main()
