// The sweep-config loader: every good example loads, YAML and JSON twins agree, the embedded
// default is the 16-shape sweep of issue 2, and each kind of mistake is one ConfigError naming
// the file, line, column and key. No GPU needed.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/config.hpp"
#include "harness/verify.hpp"
#include "kernels/registry.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = SMR_SOURCE_DIR;
const fs::path kConfigs = kSourceDir / "configs";
const fs::path kData = kSourceDir / "tests" / "data" / "configs";

std::vector<fs::path> config_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The ConfigError a config gives; fails the test when it loads.
smr::ConfigError error_of(const fs::path& p) {
  try {
    (void)smr::load_config_file(p);
  } catch (const smr::ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError from " << p.string());
  throw;  // not reached: FAIL throws
}

smr::ConfigError error_of_text(const std::string& text, bool json) {
  try {
    (void)smr::load_config_text(text, "text", json);
  } catch (const smr::ConfigError& e) {
    return e;
  }
  FAIL("expected a ConfigError from: " << text);
  throw;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string shapes_of(const smr::SweepConfig& c) {
  std::string s;
  for (const auto& p : c.problems) {
    s += '[';  // (one piece at a time: GCC 12 warns falsely on "[" + std::string)
    s += std::to_string(p.M);
    s += ',';
    s += std::to_string(p.N);
    s += ']';
  }
  return s;
}

}  // namespace

TEST_CASE("every good example and every file in configs/ loads", "[config]") {
  std::vector<fs::path> files = config_files(kData / "good");
  const std::vector<fs::path> shipped = config_files(kConfigs);
  REQUIRE(files.size() >= 10);
  for (const char* name : {"default.yaml", "quick.yaml", "quick.json", "l2-regime.yaml"})
    REQUIRE(std::find(shipped.begin(), shipped.end(), kConfigs / name) != shipped.end());
  files.insert(files.end(), shipped.begin(), shipped.end());
  for (const fs::path& f : files) {
    INFO(f.string());
    smr::SweepConfig c;
    try {
      c = smr::load_config_file(f);
    } catch (const smr::ConfigError& e) {
      FAIL(e.what());
    }
    CHECK(c.source == f.string());
    CHECK(!c.name.empty());
    CHECK(!c.kernels.empty());
    CHECK(!c.problems.empty());
    CHECK(c.normalized.at("name") == c.name);
    for (const smr::Problem& p : c.problems) {
      CHECK(p.M > 0);
      CHECK(p.N > 0);
      CHECK(p.ld_x == p.N + c.row_pad);
      CHECK(p.ld_y == p.N + c.row_pad);
    }
  }
}

TEST_CASE("YAML and JSON twins give the same sweep", "[config]") {
  const std::vector<std::pair<fs::path, fs::path>> twins{
      {kConfigs / "quick.yaml", kConfigs / "quick.json"},
      {kData / "good" / "minimal.yaml", kData / "good" / "minimal.json"},
      {kData / "good" / "every_key.yaml", kData / "good" / "every_key.json"},
  };
  for (const auto& [yaml, json] : twins) {
    INFO(yaml.string() << " vs " << json.string());
    const smr::SweepConfig a = smr::load_config_file(yaml);
    const smr::SweepConfig b = smr::load_config_file(json);
    CHECK(a.normalized == b.normalized);
    CHECK(a.normalized.dump() == b.normalized.dump());
    CHECK(shapes_of(a) == shapes_of(b));
  }
  // And a twin that differs is told apart (the comparison can fail).
  const smr::SweepConfig quick = smr::load_config_file(kConfigs / "quick.yaml");
  const smr::SweepConfig other = smr::load_config_text(
      R"({"name": "quick", "shapes": [[4096, 1024]], "seed": 2027})", "text", true);
  CHECK(quick.normalized != other.normalized);
}

TEST_CASE("the embedded default is configs/default.yaml: 16 shapes with M x N = 2^27", "[config]") {
  // The embedded text is generated from the file at build time, not copied by hand.
  CHECK(smr::default_config_text() == read_text(kConfigs / "default.yaml"));

  const smr::SweepConfig c = smr::default_config();
  CHECK(c.source == "<embedded default>");
  CHECK(c.name == "default");
  CHECK(c.kernels == smr::default_kernel_names());
  REQUIRE(c.dtypes.size() == 1);
  CHECK(c.dtypes[0] == smr::DType::f32);
  REQUIRE(c.problems.size() == 16);
  for (std::size_t i = 0; i < c.problems.size(); ++i) {
    const smr::Problem& p = c.problems[i];
    INFO("shape " << i);
    CHECK(p.N == (std::int64_t{128} << i));
    CHECK(p.M * p.N == (std::int64_t{1} << 27));
    CHECK(p.ld_x == p.N);
    CHECK(p.ld_y == p.N);
    CHECK(p.dtype == smr::DType::f32);
  }
  CHECK(c.problems.front().N == 128);
  CHECK(c.problems.back().N == 4194304);
  CHECK(c.counters.enabled);
  CHECK(c.timing.flush_l2);
  CHECK(c.tolerance == smr::kDefaultTolerance);
  CHECK(c.normalized == smr::load_config_file(kConfigs / "default.yaml").normalized);
}

TEST_CASE("the other shipped sweeps are what they say", "[config]") {
  const smr::SweepConfig quick = smr::load_config_file(kConfigs / "quick.yaml");
  CHECK(quick.problems.size() == 5);
  CHECK(quick.timing.min_repetitions <= 5);

  // l2-regime: unfused and fused, 4MN from well under to well over the 60 MB L2.
  const smr::SweepConfig l2 = smr::load_config_file(kConfigs / "l2-regime.yaml");
  CHECK(l2.kernels == std::vector<std::string>{"unfused", "fused"});
  REQUIRE(l2.problems.size() == 27);  // 3 row lengths x 9 sizes, 2^18 ... 2^26 elements
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max(), largest = 0;
  for (const smr::Problem& p : l2.problems) {
    smallest = std::min(smallest, 4 * p.M * p.N);
    largest = std::max(largest, 4 * p.M * p.N);
  }
  const std::int64_t l2_bytes = 60'000'000;
  CHECK(smallest * 10 < l2_bytes);
  CHECK(largest > 4 * l2_bytes);
}

TEST_CASE("every key is read, none left at its default", "[config]") {
  const smr::SweepConfig c = smr::load_config_file(kData / "good" / "every_key.yaml");
  CHECK(c.name == "every-key");
  CHECK(c.description == "every key, none at its default");
  CHECK(c.kernels == std::vector<std::string>{"fused", "online", "copy"});
  CHECK(c.dtypes == std::vector<smr::DType>{smr::DType::f32, smr::DType::bf16});
  // Explicit shapes first, then the sweep (N outer, M inner), all of it once per dtype.
  CHECK(shapes_of(c) ==
        "[33,1000][7,65537][64,256][128,256][64,512][128,512]"
        "[33,1000][7,65537][64,256][128,256][64,512][128,512]");
  CHECK(c.problems.front().ld_x == 1004);
  CHECK(c.problems.back().dtype == smr::DType::bf16);
  CHECK(c.row_pad == 4);
  CHECK(c.timing.warmup == 1);
  CHECK(c.timing.min_repetitions == 5);
  CHECK(c.timing.min_time_s == 0.0);
  CHECK(!c.timing.flush_l2);
  CHECK(!c.counters.enabled);
  CHECK(c.counters.metrics ==
        std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum"});
  REQUIRE_THAT(c.tolerance, Catch::Matchers::WithinRel(2.5e-4, 1e-12));
  CHECK(c.seed == std::numeric_limits<std::uint64_t>::max());
  CHECK(c.output_dir == "results/every-key");
}

TEST_CASE("keys left out take their documented defaults", "[config]") {
  const smr::SweepConfig c = smr::load_config_file(kData / "good" / "minimal.yaml");
  const smr::TimingPolicy t;
  CHECK(c.kernels == smr::default_kernel_names());
  CHECK(c.dtypes == std::vector<smr::DType>{smr::DType::f32});
  CHECK(c.description.empty());
  CHECK(c.row_pad == 0);
  CHECK(c.timing.warmup == t.warmup);
  CHECK(c.timing.min_repetitions == t.min_repetitions);
  CHECK(c.timing.min_time_s == t.min_time_s);
  CHECK(c.timing.flush_l2 == t.flush_l2);
  CHECK(c.timing.noise_target == 0.005);
  CHECK(c.timing.max_seconds_per_record == 0.2);
  CHECK(c.counters.enabled);
  CHECK(c.counters.metrics.empty());
  CHECK(c.tolerance == smr::kDefaultTolerance);  // verify.hpp's, derived in verification.md
  CHECK(c.seed == 2026);
  CHECK(c.output_dir == "runs");
  // normalized spells every default out.
  for (const char* key : {"name", "description", "kernels", "dtypes", "shapes", "row_pad", "timing",
                          "counters", "verify", "seed", "output_dir"})
    CHECK(c.normalized.contains(key));
  CHECK(c.normalized.at("timing").at("warmup") == t.warmup);
  CHECK(c.normalized.at("verify").at("tolerance") == 1.0 / 32768.0);
}

TEST_CASE("sweeps expand as documented", "[config]") {
  SECTION("a power-of-two range of N at a fixed M") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "sweep_range_m.yaml");
    CHECK(shapes_of(c) == "[256,1024][256,2048][256,4096][256,8192][256,16384][256,32768]");
    CHECK(c.kernels == std::vector<std::string>{"fused"});  // a single name, not a list
  }
  SECTION("M derived from a list of element counts, N outer") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "sweep_elements_list.yaml");
    CHECK(shapes_of(c) == "[4000,1000][8000,1000][2000,2000][4000,2000][1000,4000][2000,4000]");
  }
  SECTION("explicit shapes first, then the sweep") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "shapes_and_sweep.json");
    CHECK(shapes_of(c) == "[1,1][1,7][3,33][8192,128][4096,256][2048,512][1024,1024]");
  }
  SECTION("`all` expands in place, in registry order") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "all_and_ceilings.yaml");
    std::vector<std::string> expected = smr::default_kernel_names();
    expected.push_back("copy");
    expected.push_back("fma");
    CHECK(c.kernels == expected);
  }
  SECTION("a row stride that breaks 16-byte alignment") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "misaligned_rows.yaml");
    CHECK(c.row_pad == 1);
    REQUIRE(c.problems.size() == 6);  // 2 shapes x 3 dtypes
    for (const smr::Problem& p : c.problems) {
      CHECK(p.ld_x == p.N + 1);
      CHECK((p.ld_x * smr::dtype_bytes(p.dtype)) % 16 != 0);
    }
  }
  SECTION("YAML features: block scalars, aliases, tags, signs") {
    const smr::SweepConfig c = smr::load_config_file(kData / "good" / "yaml_features.yaml");
    CHECK(c.name == "yaml-features");
    CHECK(c.description == "folded text\n");
    CHECK(c.kernels == std::vector<std::string>{"fused", "online"});
    CHECK(c.timing.warmup == 4);  // *reps
    CHECK(c.timing.min_repetitions == 4);
    CHECK(c.timing.flush_l2);
    CHECK(c.seed == 7);
    CHECK(c.output_dir == "2026");  // !!str keeps a number-looking value a string
  }
}

TEST_CASE("normalized is itself a config that loads back to itself", "[config]") {
  std::vector<fs::path> files = config_files(kData / "good");
  const std::vector<fs::path> shipped = config_files(kConfigs);
  files.insert(files.end(), shipped.begin(), shipped.end());
  for (const fs::path& f : files) {
    INFO(f.string());
    const smr::SweepConfig a = smr::load_config_file(f);
    const smr::SweepConfig b = smr::load_config_text(a.normalized.dump(2), "normalized", true);
    CHECK(b.normalized == a.normalized);
    CHECK(shapes_of(b) == shapes_of(a));
  }
}

namespace {

struct Mistake {
  const char* file;  // under tests/data/configs/bad/
  int line;
  int column;
  const char* key;
  const char* fragment;  // part of the message
};

// One file per mistake. Lines and columns count from 1; a column counts bytes.
const Mistake kMistakes[] = {
    // unknown keys, with the nearest valid one by edit distance
    {"unknown_key.yaml", 4, 3, "timing.warmpu", "unknown key; did you mean 'warmup'?"},
    {"unknown_top_key.yaml", 2, 1, "kernel", "unknown key; did you mean 'kernels'?"},
    {"unknown_key_far.yaml", 3, 1, "zzzzzzzz", "unknown key; valid keys are: name, description,"},
    {"unknown_key.json", 4, 25, "sweep.m", "unknown key; did you mean 'M'?"},
    {"duplicate_key.yaml", 3, 1, "name", "key given twice (first at line 1, column 1)"},
    {"missing_name.yaml", 1, 1, "name", "missing required key"},
    // wrong types
    {"wrong_type_int.yaml", 4, 20, "timing.min_repetitions",
     "expected an integer, found the string 'many'"},
    {"wrong_type_mapping.yaml", 3, 9, "timing",
     "expected a mapping with keys warmup, min_repetitions, min_time_s, flush_l2, noise_target, "
     "max_seconds_per_record, found the integer 5"},
    {"wrong_type_bool.yaml", 3, 21, "counters.enabled", "expected true or false, found the integer 1"},
    {"wrong_type_quoted_number.json", 4, 28, "timing.min_time_s",
     "expected a number, found the string '0.05'"},
    {"shape_not_pair.yaml", 2, 10, "shapes[0]", "expected an [M, N] pair, found a list"},
    {"not_a_mapping.yaml", 1, 1, "", "expected a mapping of config keys"},
    // M or N <= 0, stride < N
    {"m_zero.yaml", 4, 6, "shapes[1][0]", "M must be > 0, found 0"},
    {"n_negative.yaml", 3, 12, "sweep.N[1]", "N must be > 0, found -256"},
    {"stride_less_than_n.yaml", 3, 10, "row_pad",
     "the row stride N + row_pad must be >= N: row_pad must be >= 0, found -1"},
    // integers that would overflow (shapes too large for a device load: test_sweep_plan.cpp)
    {"overflow.yaml", 2, 10, "shapes[0]",
     "shape [9223372036854775807, 2] in fp32 needs more than 2^63 bytes"},
    {"int_too_big.yaml", 3, 7, "seed", "integer 18446744073709551616 does not fit in 64 bits"},
    {"row_pad_overflow.yaml", 4, 10, "row_pad",
     "2305843009213693952 makes shape [4, 128] (line 3) in fp32 need more than 2^63 bytes"},
    // unknown kernels and dtypes, with the nearest name
    {"unknown_kernel.yaml", 2, 18, "kernels[1]", "unknown kernel 'onlien'; did you mean 'online'?"},
    {"unknown_dtype.yaml", 2, 16, "dtypes[1]", "unknown dtype 'fp64'; did you mean 'fp32'?"},
    // empty sweeps and sweeps that make no sense
    {"empty_sweep.yaml", 1, 1, "", "empty sweep: give `shapes`"},
    {"empty_shapes.yaml", 2, 9, "shapes", "empty list: the sweep would have no shapes"},
    {"empty_range.yaml", 3, 6, "sweep.N", "empty range: from = 4096 is greater than to = 128"},
    {"range_not_power_of_two.yaml", 3, 13, "sweep.N.from", "expected a power of two, found 100"},
    {"elements_not_multiple.yaml", 4, 13, "sweep.elements",
     "elements = 1048576 is not a multiple of N = 1000"},
    {"m_and_elements.yaml", 5, 13, "sweep.elements", "give either `M` or `elements`, not both"},
    {"duplicate_shape.yaml", 3, 13, "sweep.N[0]",
     "shape [8, 128] appears twice (first at line 2, column 10)"},
    {"tolerance_zero.yaml", 3, 21, "verify.tolerance",
     "expected a relative tolerance in (0, 1], found 0"},
    {"noise_target_zero.yaml", 3, 24, "timing.noise_target",
     "expected a relative spread above 0 and at most 0.5 (0.005 = 0.5%), found 0"},
    {"max_seconds_negative.yaml", 4, 27, "timing.max_seconds_per_record",
     "expected seconds from 0 to 3600, found -0.1"},
    // malformed YAML
    // (a syntax error is where the parser finds it: the unclosed '[' of line 2 is found at the
    // ':' of line 3, which cannot continue the flow list)
    {"malformed.yaml", 3, 7, "", "malformed YAML: end of sequence flow not found"},
    {"malformed_bracket.yaml", 2, 17, "", "malformed YAML: illegal flow end"},
    {"malformed_tab.yaml", 2, 1, "", "malformed YAML:"},
    {"two_documents.yaml", 3, 1, "", "expected one YAML document, found a second one"},
    {"control_character.yaml", 1, 14, "", "malformed YAML: control character \\x01 is not allowed"},
    {"alias_cycle.yaml", 2, 13, "", "malformed YAML: an alias inside the node it names"},
    // malformed JSON, strictly: YAML-only syntax in a .json file is malformed JSON
    {"malformed.json", 4, 1, "",
     "malformed JSON: syntax error while parsing object key - unexpected '}'; expected string "
     "literal"},
    {"yaml_syntax.json", 1, 2, "", "malformed JSON: syntax error while parsing value - invalid literal"},
    {"unterminated_string.json", 1, 26, "", "malformed JSON: syntax error while parsing object"},
    {"tab_in_string.json", 2, 15, "", "control character U+0009 (HT) must be escaped"},
    {"comment.json", 2, 3, "", "malformed JSON: syntax error while parsing object key"},
    {"single_quotes.json", 1, 2, "", "malformed JSON: syntax error while parsing object key"},
};

}  // namespace

TEST_CASE("each kind of mistake is one ConfigError with file, line, column and key", "[config]") {
  std::set<std::string> covered;
  for (const Mistake& m : kMistakes) {
    const fs::path path = kData / "bad" / m.file;
    INFO(path.string());
    const smr::ConfigError e = error_of(path);
    const std::string what = e.what();
    INFO(what);
    CHECK(e.file == path.string());
    CHECK(e.line == m.line);
    CHECK(e.column == m.column);
    CHECK(e.key == m.key);
    const std::string head = path.string() + ":" + std::to_string(m.line) + ":" +
                             std::to_string(m.column) + ": " +
                             (std::string(m.key).empty() ? "" : std::string(m.key) + ": ");
    CHECK(what.rfind(head, 0) == 0);
    CHECK(contains(what, m.fragment));
    CHECK(what.find('\n') == std::string::npos);
    covered.insert(m.file);
  }
  // Every bad file is in the table above, and there are at least a dozen different mistakes.
  for (const fs::path& f : config_files(kData / "bad")) {
    INFO(f.filename().string());
    CHECK(covered.count(f.filename().string()) == 1);
  }
  CHECK(covered.size() >= 12);
}

TEST_CASE("mistakes in text: overflow, hostile input, limits", "[config]") {
  SECTION("N x M past 64 bits through a sweep") {
    const auto e = error_of_text("name: x\nsweep: {N: {from: 1, to: 4611686018427387904}, M: 4}\n",
                                 false);
    CHECK(e.key == "sweep.N");
    CHECK(contains(e.what(), "needs more than 2^63 bytes"));
  }
  SECTION("row_pad that overflows the stride is blamed, not the shape") {
    const auto e = error_of_text("name: x\nshapes: [[1, 8]]\nrow_pad: 9223372036854775807\n", false);
    CHECK(e.key == "row_pad");
    CHECK(e.line == 3);
    CHECK(e.column == 10);
    CHECK(contains(e.what(), "9223372036854775807 makes shape [1, 8] (line 2)"));
    CHECK(contains(e.what(), "need more than 2^63 bytes"));
  }
  SECTION("row_pad past 2^63 bytes, with a shape that fits unpadded") {
    const auto e = error_of_text("name: x\nrow_pad: 2305843009213693952\nshapes: [[4, 128]]\n", false);
    CHECK(e.key == "row_pad");
    CHECK(e.line == 2);
    CHECK(contains(e.what(), "makes shape [4, 128] (line 3) in fp32 need more than 2^63 bytes"));
  }
  SECTION("a shape past 2^63 bytes even unpadded is the shape's error, with or without row_pad") {
    const auto e = error_of_text(
        "name: x\nrow_pad: 8\nshapes: [[4, 8], [1000000, 4611686018427387904]]\n", false);
    CHECK(e.key == "shapes[1]");
    CHECK(contains(e.what(), "shape [1000000, 4611686018427387904] in fp32 needs more than 2^63"));
  }
  SECTION("shapes too large for any card load: the run skips them on the card at hand") {
    const smr::SweepConfig c =
        smr::load_config_text("name: x\nrow_pad: 100000000000\nshapes: [[4, 128]]\n", "<text>", false);
    CHECK(c.problems.size() == 1);
    CHECK(c.problems[0].ld_x == 100000000128);
  }
  SECTION("a JSON number past double's range") {
    const auto e = error_of_text(R"({"name": "x", "shapes": [[1, 1e400]]})", true);
    CHECK(e.line == 1);
    CHECK(e.column == 30);
    CHECK(contains(e.what(), "number 1e400 is out of range"));
  }
  SECTION("a YAML number past double's range, and not-a-number") {
    auto e = error_of_text("name: x\nshapes: [[1, 1]]\nverify: {tolerance: 1e400}\n", false);
    CHECK(e.key == "verify.tolerance");
    CHECK(contains(e.what(), "number 1e400 is out of range"));
    e = error_of_text("name: x\nshapes: [[1, 1]]\nverify: {tolerance: .nan}\n", false);
    CHECK(contains(e.what(), "expected a finite number, found the number .nan"));
  }
  SECTION("a float where an integer belongs") {
    const auto e = error_of_text("name: x\nshapes: [[1, 1.5]]\n", false);
    CHECK(e.key == "shapes[0][1]");
    CHECK(contains(e.what(), "expected an integer, found the number 1.5"));
  }
  SECTION("a stray ',' at the top level (yaml-cpp's LoadAll loops forever on it)") {
    const auto e = error_of_text(",", false);
    CHECK(e.line == 1);
    CHECK(e.column == 1);
    CHECK(contains(e.what(), "malformed YAML: unexpected ','"));
  }
  SECTION("JSON followed by a NUL byte and garbage (nlohmann stops reading at NUL)") {
    const char raw[] = "{\"name\": \"x\", \"shapes\": [[1, 1]]}\0garbage";
    const std::string text(raw, sizeof raw - 1);
    const auto e = error_of_text(text, true);
    CHECK(e.column == 34);
    CHECK(contains(e.what(), "control character \\x00"));
  }
  SECTION("an overflowing JSON number followed by garbage") {
    const auto e = error_of_text("99999999999999991e400999 fused {}", true);
    CHECK(e.column == 1);
    CHECK(contains(e.what(), "is out of range"));
  }
  SECTION("an empty text and a text of comments") {
    CHECK(contains(error_of_text("", false).what(), "empty config"));
    CHECK(contains(error_of_text("# nothing\n", false).what(), "empty config"));
    CHECK(contains(error_of_text("", true).what(), "malformed JSON"));
  }
  SECTION("invalid UTF-8 in a string that would reach results.json") {
    const auto e = error_of_text("name: \"ok\"\ndescription: \xff\xfe\nshapes: [[1, 1]]\n", false);
    CHECK(e.key == "description");
    CHECK(contains(e.what(), "invalid UTF-8"));
  }
  SECTION("user text in a message stays one printable line") {
    const auto e = error_of_text("name: x\nshapes: [[1, 1]]\n\"bad\\nkey\": 1\n", false);
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK(contains(what, "bad\\x0akey"));
  }
  SECTION("more shapes than the loader accepts") {
    std::string text = "name: x\nsweep:\n  N: [";
    for (int i = 1; i <= 300; ++i) text += std::to_string(i) + (i < 300 ? ", " : "]\n");
    text += "  M: [";
    for (int i = 1; i <= 300; ++i) text += std::to_string(i) + (i < 300 ? ", " : "]\n");
    const auto e = error_of_text(text, false);
    CHECK(e.key == "sweep");
    CHECK(contains(e.what(), "more than 65536 shapes"));
  }
  SECTION("a kernel listed twice, directly or through `all`") {
    auto e = error_of_text("name: x\nkernels: [fused, fused]\nshapes: [[1, 1]]\n", false);
    CHECK(e.key == "kernels[1]");
    CHECK(contains(e.what(), "kernel 'fused' listed twice"));
    e = error_of_text("name: x\nkernels: [all, fused]\nshapes: [[1, 1]]\n", false);
    CHECK(contains(e.what(), "(`all` includes it)"));
  }
  SECTION("files: unknown extension, missing file") {
    const auto e1 = error_of(kSourceDir / "CMakeLists.txt");
    CHECK(contains(e1.what(), "unknown config format '.txt'"));
    const auto e2 = error_of(kData / "good" / "no-such-file.yaml");
    CHECK(contains(e2.what(), "no such file"));
    CHECK(e2.line == 0);
  }
}

TEST_CASE("JSON that YAML would read otherwise is read as JSON", "[config]") {
  // Found by fuzzing, when JSON went through yaml-cpp: a carriage return without a line feed and
  // a line break between a key and its ':' are JSON whitespace, and yaml-cpp rejected both; so
  // did it a \uD83D\uDE00 surrogate pair.
  smr::SweepConfig c = smr::load_config_text(
      "{\n\t\"name\": \"x\",\r\"shapes\": [[4, 1028]\r\r, [1, 2]]\n}\r\r", "text", true);
  CHECK(shapes_of(c) == "[4,1028][1,2]");
  c = smr::load_config_text("{\"name\"\n: \"\\ud83d\\ude00\", \"shapes\"\n\n:\n[[1, 2]]}", "text", true);
  CHECK(c.name == "\xf0\x9f\x98\x80");
  // Positions count bytes on the line, a lone CR not ending it.
  const auto e = error_of_text("{\n\t\"name\": \"x\",\r\"shapes\": [[1, 0]]\r}", true);
  CHECK(e.line == 2);
  CHECK(e.column == 30);
  CHECK(e.key == "shapes[0][1]");
  // A UTF-8 byte order mark is skipped, and counted: columns count bytes.
  const auto b = error_of_text("\xef\xbb\xbf{\"name\": \"bom\", \"shapes\": [[1, 0]]}", true);
  CHECK(b.column == 35);
  // CRLF line ends read as one line end in YAML.
  const auto f = error_of_text("name: x\r\nshapes: [[1, 0]]\r\n", false);
  CHECK(f.line == 2);
  CHECK(f.column == 14);
}

TEST_CASE("a config path that is no readable file says what it is", "[config]") {
  const fs::path dir = fs::temp_directory_path() / ("smr-config-files-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto message = [&](const std::string& name) {
    const smr::ConfigError e = error_of(dir / name);
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK(what.rfind((dir / name).string() + ": ", 0) == 0);  // starts with the file
    return what.substr((dir / name).string().size() + 2);
  };
  fs::create_symlink("/dev/zero", dir / "zero.yaml");
  CHECK(message("zero.yaml") == "not a regular file (a character device)");
  fs::create_symlink("loop.yaml", dir / "loop.yaml");
  CHECK(contains(message("loop.yaml"), "a symlink loop"));
  fs::create_symlink("gone.yaml", dir / "dangling.yaml");
  CHECK(message("dangling.yaml") == "a symlink to a missing file (gone.yaml)");
  fs::create_directory(dir / "adir.yaml");
  CHECK(message("adir.yaml") == "a directory, not a file");
  fs::create_directory(dir / "runs");  // no extension: what it is comes before the format
  CHECK(message("runs") == "a directory, not a file");
  CHECK(message("missing.json") == "no such file");

  // Larger than the cap: refused by its size before it is read (a sparse file: no disk used).
  {
    std::ofstream(dir / "huge.yaml") << "name: huge\nshapes: [[1, 1]]\n";
  }
  fs::resize_file(dir / "huge.yaml", smr::kMaxConfigBytes + 1);
  CHECK(message("huge.yaml") == std::to_string(smr::kMaxConfigBytes + 1) +
                                   " bytes, larger than the 16 MiB a config may be");
  // At the cap it is read (and is then a YAML matter: the NUL padding is refused as text).
  fs::resize_file(dir / "huge.yaml", smr::kMaxConfigBytes);
  const smr::ConfigError at_cap = error_of(dir / "huge.yaml");
  CHECK(at_cap.line == 3);
  CHECK(!contains(at_cap.what(), "larger than"));
  fs::remove_all(dir);
}
