"""scripts/setup against a fake PATH: stub cmake, ninja, nvcc, c++, apt-get, apt-cache, sudo and
dpkg-query in a temporary folder (beside links to the few system utilities the script uses), so the
outcome depends on the stubs only, never on this machine's packages. The stub cmake answers the
library probe (a configure of the generated probe project) from a file the test writes."""
import os
import re
import shutil
import stat
import subprocess
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup"

# What scripts/setup runs besides the stubs.
UTILITIES = ["bash", "env", "sed", "grep", "head", "tail", "tr", "cat", "mkdir", "rm", "dirname",
             "id", "stat", "cksum", "sort", "touch",
             "cp", "chmod"]  # these two for the stubs

LIBS_FOUND = textwrap.dedent("""\
    -- smr-probe|fmt|1|10.2.1|/opt/x/lib/cmake/fmt|10.2.1
    -- smr-probe|nlohmann_json|1|3.11.3|/opt/x/share/cmake/nlohmann_json|3.11.3
    -- smr-probe|yaml-cpp|1|0.8.0|/opt/x/lib/cmake/yaml-cpp|0.8.0
    -- smr-probe|CLI11|1|2.4.1|/opt/x/share/cmake/CLI11|2.4.1
    -- smr-probe|benchmark|1|1.8.3|/opt/x/lib/cmake/benchmark|1.8.3
    -- smr-probe|Catch2|1|3.4.0|/opt/x/lib/cmake/Catch2|3.4.0
    -- smr-probe|cuDNN|/opt/x/lib/libcudnn.so|9.1.0|/opt/x/include
    """)


def cmake_minimum():
    """The larger of CMakeLists.txt's and CMakePresets.json's minimum, as (major, minor)."""
    m = re.search(r"cmake_minimum_required\(VERSION (\d+)\.(\d+)", (ROOT / "CMakeLists.txt").read_text())
    a = (int(m.group(1)), int(m.group(2)))
    p = re.search(r'"cmakeMinimumRequired"\s*:\s*\{\s*"major"\s*:\s*(\d+)\s*,\s*"minor"\s*:\s*(\d+)',
                  (ROOT / "CMakePresets.json").read_text())
    return max(a, (int(p.group(1)), int(p.group(2)))) if p else a


def find_package_names():
    text = (ROOT / "CMakeLists.txt").read_text() + (ROOT / "tests" / "CMakeLists.txt").read_text()
    return re.findall(r"^\s*find_package\(\s*([A-Za-z0-9_-]+)", text, re.M)


class Fake:
    """A temporary PATH of stubs. Each stub appends its arguments to calls.log."""

    def __init__(self, tmp):
        self.tmp = Path(tmp)
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        self.log = self.tmp / "calls.log"
        self.log.touch()
        self.probe = self.tmp / "probe-output.txt"
        self.probe.write_text(LIBS_FOUND)
        for u in UTILITIES:
            path = shutil.which(u)
            assert path, f"{u} not found on this machine"
            (self.bin / u).symlink_to(path)
        os_release = self.tmp / "os-release"
        os_release.write_text('ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n')
        self.env = {"PATH": str(self.bin), "HOME": str(self.tmp), "SMR_SETUP_CACHE": str(self.tmp / "cache"),
                    "SMR_OS_RELEASE": str(os_release), "STUB_LOG": str(self.log),
                    "STUB_PROBE": str(self.probe), "STUB_BIN": str(self.bin), "LC_ALL": "C"}
        self.cmake("4.1.2")
        self.stub("ninja", 'echo 1.13.0')
        self.stub("nvcc", 'echo "Cuda compilation tools, release 13.0, V13.0.88"')
        self.cxx(ok=True)
        self.stub("sudo", 'exec "$@"')
        self.stub("dpkg-query", 'exit 1')
        self.apt_get(ok=False)
        self.stub("apt-cache", 'echo "nodejs:"; echo "  Installed: (none)"; echo "  Candidate: 18.19.0+dfsg-6"')

    def stub(self, name, body):
        path = self.bin / name
        if path.exists() or path.is_symlink():
            path.unlink()
        path.write_text(f'#!/bin/bash\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def remove(self, name):
        (self.bin / name).unlink()

    def cmake(self, version):
        # --version; a configure (-S SRC -B BIN) prints the probe's answer and keeps its source.
        self.stub("cmake", textwrap.dedent(f"""\
            if [ "$1" = --version ]; then echo "cmake version {version}"; echo; echo "CMake suite"; exit 0; fi
            while [ $# -gt 0 ]; do [ "$1" = -S ] && cp "$2/CMakeLists.txt" "$STUB_BIN/../probe-CMakeLists.txt"; shift; done
            echo "-- The CXX compiler identification is GNU 13.2.0"
            cat "$STUB_PROBE"
            echo "-- Configuring done"
            """))

    def cxx(self, ok):
        self.stub("c++", textwrap.dedent(f"""\
            case "$1" in
              -dumpfullversion) echo 13.2.0; exit 0 ;;
              --version) echo "c++ (stub) 13.2.0"; exit 0 ;;
            esac
            cat > /dev/null
            exit {0 if ok else 1}
            """))

    def apt_get(self, ok, installs=None):
        # installs: {package: (tool, body)} written into the fake PATH when "installed".
        lines = []
        for pkg, (tool, body) in (installs or {}).items():
            lines.append(f'case " $* " in *" {pkg} "*) printf \'#!/bin/bash\\n{body}\\n\' > "$STUB_BIN/{tool}";'
                         f' chmod +x "$STUB_BIN/{tool}" ;; esac')
        self.stub("apt-get", "\n".join(lines) + ("\nexit 0" if ok else '\necho "E: no registry" >&2; exit 100'))

    def run(self, *args, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        p = subprocess.run([str(SETUP), *args], env=env, capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def calls(self, name):
        return [line for line in self.log.read_text().splitlines() if line.split(" ", 1)[0] == name]


class SetupTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.f = Fake(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_everything_present_succeeds_without_apt_and_prints_what_it_found(self):
        rc, out, err = self.f.run()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.f.calls("apt-get"), [])
        self.assertEqual(self.f.calls("dpkg-query"), [], "setup asks for tools, not packages")
        self.assertNotIn("installing", out)
        b = str(self.f.bin)
        self.assertRegex(out, rf"setup: cmake +4\.1\.2 +{re.escape(b)}/cmake")
        self.assertRegex(out, rf"setup: ninja +1\.13\.0 +{re.escape(b)}/ninja")
        self.assertRegex(out, rf"setup: C\+\+ compiler +13\.2\.0 +{re.escape(b)}/c\+\+")
        self.assertRegex(out, r"setup: nvcc +13\.0")
        for name, version in [("fmt", "10.2.1"), ("nlohmann_json", "3.11.3"), ("yaml-cpp", "0.8.0"),
                              ("CLI11", "2.4.1"), ("benchmark", "1.8.3"), ("Catch2", "3.4.0"),
                              ("cuDNN", "9.1.0")]:
            self.assertRegex(out, rf"setup: {re.escape(name)} +{re.escape(version)} +/opt/x/")

    def test_probe_is_the_builds_own_find_package_calls_and_is_cached(self):
        rc, out, err = self.f.run()
        self.assertEqual(rc, 0, out + err)
        probe = (self.f.tmp / "probe-CMakeLists.txt").read_text()
        names = find_package_names()
        self.assertIn("nlohmann_json", names)
        for name in names:
            self.assertRegex(probe, rf"find_package\({re.escape(name)}\b[^)]*QUIET\)")
        self.assertIn("find_package(nlohmann_json 3.10 QUIET)", probe)
        self.assertIn("find_library(CUDNN_LIBRARY", probe)
        self.assertNotIn("REQUIRED", probe)
        configures = lambda: [c for c in self.f.calls("cmake") if " -S " in c]
        self.assertEqual(len(configures()), 1)
        rc, out2, err = self.f.run()
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(configures()), 1, "the second run reuses the cached probe")
        self.assertIn("fmt", out2)
        self.f.cmake("4.1.3")  # a new cmake: probed again
        self.assertEqual(self.f.run()[0], 0)
        self.assertEqual(len(configures()), 2)

    def test_every_find_package_of_the_build_is_known_to_setup(self):
        text = SETUP.read_text()
        for name in find_package_names():
            self.assertIn(f"[{name}]=", text, f"find_package({name}) has no entry in scripts/setup's lib_pkg")

    def test_too_old_cmake_and_failing_apt_names_tool_version_and_command(self):
        self.f.cmake("3.20.0")
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1, out + err)
        major, minor = cmake_minimum()
        self.assertIn(f"cmake: 3.20.0 found at {self.f.bin}/cmake; needs >= {major}.{minor}", err)
        self.assertRegex(err, r"install with: (sudo )?apt-get install cmake \(")
        self.assertTrue(any("install" in c and "cmake" in c for c in self.f.calls("apt-get")))
        self.assertEqual([c for c in self.f.calls("cmake") if " -S " in c], [],
                         "no probe with a cmake too old for the build")

    def test_installed_yet_still_too_old_says_so(self):
        # apt-get succeeds, but the old cmake stays first on PATH.
        self.f.cmake("3.20.0")
        self.f.apt_get(ok=True)
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("cmake: 3.20.0 found", err)
        self.assertIn("apt-get installed them, yet the one found is still the one above", err)
        self.assertEqual(len(self.f.calls("apt-get")), 1, "one try per package set")

    def test_cmake_minimum_comes_from_the_build(self):
        major, minor = cmake_minimum()
        self.f.cmake(f"{major}.{minor}.0")
        self.assertEqual(self.f.run()[0], 0)
        self.f.cmake(f"{major}.{minor - 1}.9" if minor else f"{major - 1}.99.0")
        self.assertEqual(self.f.run()[0], 1)

    def test_missing_libraries_are_named_with_the_version_found(self):
        self.f.probe.write_text(LIBS_FOUND.replace("smr-probe|fmt|1|10.2.1|/opt/x/lib/cmake/fmt|10.2.1",
                                                   "smr-probe|fmt|0||fmt-NOTFOUND|")
                                .replace("smr-probe|nlohmann_json|1|3.11.3|/opt/x/share/cmake/nlohmann_json|3.11.3",
                                         "smr-probe|nlohmann_json|0||nlohmann_json_DIR-NOTFOUND|3.9.1|/usr/share/nlj/nlohmann_jsonConfig.cmake"))
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1, out + err)
        self.assertIn("fmt: not found by CMake", err)
        self.assertIn("nlohmann_json: 3.9.1 found (/usr/share/nlj/nlohmann_jsonConfig.cmake); needs >= 3.10", err)
        self.assertRegex(err, r"install with: (sudo )?apt-get install libfmt-dev nlohmann-json3-dev \(")
        installs = self.f.calls("apt-get")
        self.assertTrue(installs and "libfmt-dev" in installs[0] and "nlohmann-json3-dev" in installs[0])
        self.assertNotIn("cmake", installs[0].split("install", 1)[1].split())

    def test_missing_ninja_is_installed_then_found(self):
        self.f.remove("ninja")
        self.f.apt_get(ok=True, installs={"ninja-build": ("ninja", "echo 1.11.1")})
        rc, out, err = self.f.run()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("setup: installing: ninja-build", out)
        self.assertRegex(out, r"setup: ninja +1\.11\.1")
        self.assertEqual(len(self.f.calls("apt-get")), 1)

    def test_no_apt_get_names_the_command(self):
        self.f.remove("ninja")
        self.f.remove("apt-get")
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1)
        self.assertIn("ninja: not found on PATH", err)
        self.assertRegex(err, r"install with: (sudo )?apt-get install ninja-build \(no apt-get here\)")

    def test_compiler_without_cxx20(self):
        self.f.cxx(ok=False)
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1)
        self.assertIn("does not compile C++20", err)
        self.assertRegex(err, r"apt-get install g\+\+")

    def test_old_nvcc_fails(self):
        self.f.stub("nvcc", 'echo "Cuda compilation tools, release 12.4, V12.4.1"')
        rc, out, err = self.f.run()
        self.assertEqual(rc, 1)
        self.assertIn("CUDA 12.4 found", err)

    def test_missing_test_needs_are_warnings(self):
        rc, out, err = self.f.run("--tests")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("warning: Node.js not found", err)
        self.assertIn("apt's nodejs here is 18", err)
        self.assertIn("warning: chromium not installed", err)
        self.assertIn("warning: rsvg-convert not installed", err)
        installs = " ".join(self.f.calls("apt-get"))
        self.assertNotIn("nodejs", installs, "apt's nodejs 18 is too old to be worth installing")
        self.assertIn("chromium", installs)

    def test_renderer_installs_a_new_enough_node_and_is_quiet_when_it_cannot(self):
        # apt's candidate is 18: nothing installed, nothing said (softmax-bench names what is missing).
        rc, out, err = self.f.run("--renderer")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.f.calls("apt-get"), [])
        self.assertNotIn("warning", err)
        self.assertNotIn("chromium", out + err)
        # A candidate >= 20: installed.
        self.f.stub("apt-cache", 'echo "nodejs:"; echo "  Candidate: 20.19.2-1nodesource1"')
        self.f.apt_get(ok=True, installs={"nodejs": ("node", 'echo 20')})
        rc, out, err = self.f.run("--renderer")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("installing: nodejs", out)


if __name__ == "__main__":
    unittest.main()
