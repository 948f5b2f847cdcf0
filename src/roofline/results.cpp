// results.json writer and reader. docs/results-schema.md is the reference for every key.
#include "roofline/results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace smr {

using nlohmann::json;

std::string Record::key() const {
  return fmt::format("{}/{}/{}/{}/{}/{}", kernel, to_string(dtype), M, N, ld_x, ld_y);
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

// JSON has no NaN or infinity: a non-finite number is written as null (and read back as NaN).
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json to_json(const Ceilings& c) {
  json j = {{"source", c.source},           {"device", c.device},
            {"dram_GBps", number(c.dram_GBps)}, {"peak_dram_GBps", number(c.peak_dram_GBps)},
            {"fp32_GFLOPs", number(c.fp32_GFLOPs)}, {"l2_bytes", c.l2_bytes},
            {"sm_count", c.sm_count}};
  if (c.l2_GBps > 0) j["l2_GBps"] = number(c.l2_GBps);  // 0 = unknown: left out
  return j;
}

json to_json(const ModelPoint& m) {
  return {{"traffic", std::string(to_string(m.traffic))},
          {"dram_read_bytes", number(m.dram_read_bytes)},
          {"dram_write_bytes", number(m.dram_write_bytes)},
          {"dram_bytes", number(m.dram_bytes)},
          {"l2_bytes", number(m.l2_bytes)},
          {"passes", number(m.passes)},
          {"flops", number(m.flops)},
          {"intensity", number(m.intensity)},
          {"bound_time_s", number(m.bound_time_s)},
          {"bound_GBps", number(m.bound_GBps)},
          {"bound", m.bound},
          {"note", m.note}};
}

json to_json(const VerifyResult& v) {
  return {{"passed", v.passed},           {"max_rel_err", number(v.max_rel_err)},
          {"rel_l2_err", number(v.rel_l2_err)}, {"tolerance", number(v.tolerance)},
          {"rows_checked", v.rows_checked}, {"detail", v.detail}};
}

json to_json(const NoiseStats& n) {
  return {{"statistic", n.statistic}, {"value", number(n.value)},         {"target", number(n.target)},
          {"converged", n.converged}, {"seconds", number(n.seconds)}, {"max_seconds", number(n.max_seconds)}};
}

json to_json(const ClockStats& c) {
  if (!c.available) return {{"available", false}, {"unavailable", c.unavailable}};
  json j = {{"available", true},          {"sm_clock_mhz_min", number(c.sm_mhz_min)},
            {"sm_clock_mhz_max", number(c.sm_mhz_max)}, {"readings", c.readings},
            {"reasons", c.reasons},      {"throttled", c.throttled}};
  if (c.fell) j["fell"] = *c.fell;
  return j;
}

json to_json(const TimeStats& t) {
  json j = {{"median_s", number(t.median_s)}, {"min_s", number(t.min_s)},
            {"max_s", number(t.max_s)},       {"mean_s", number(t.mean_s)},
            {"stddev_s", number(t.stddev_s)}, {"cv", number(t.cv)},
            {"samples", t.samples},           {"launches_per_sample", t.launches_per_sample},
            {"l2_flushed", t.l2_flushed}};
  if (t.noise) j["noise"] = to_json(*t.noise);
  if (t.clocks) j["clocks"] = to_json(*t.clocks);
  return j;
}

json to_json(const Record& r) {
  json j = {{"kernel", r.kernel}, {"dtype", std::string(to_string(r.dtype))},
            {"M", r.M},           {"N", r.N},
            {"ld_x", r.ld_x},     {"ld_y", r.ld_y},
            {"status", r.status}, {"reason", r.reason},
            {"model", to_json(r.model)}};
  if (r.verify) j["verify"] = to_json(*r.verify);
  if (r.time) j["time"] = to_json(*r.time);
  if (r.effective_GBps) j["effective_GBps"] = number(*r.effective_GBps);
  if (r.pct_of_copy) j["pct_of_copy"] = number(*r.pct_of_copy);
  if (r.model_GBps) j["model_GBps"] = number(*r.model_GBps);
  if (!r.counters.is_null()) j["counters"] = r.counters;
  if (r.counters_reason) j["counters_reason"] = *r.counters_reason;
  if (!r.extra.is_null()) j["extra"] = r.extra;
  return j;
}

}  // namespace

json to_json(const RunResults& r) {
  json records = json::array();
  for (const auto& rec : r.records) records.push_back(to_json(rec));
  return {{"schema", kResultsSchema},
          {"schema_version", kResultsSchemaVersion},
          {"tool_version", r.tool_version},
          {"created", r.created},
          {"command", r.command},
          {"complete", r.complete},
          {"config", r.config},
          {"device", r.device},
          {"ceilings", to_json(r.ceilings)},
          {"records", std::move(records)},
          {"claims", r.claims}};
}

// ---------------------------------------------------------------------------------------------
// Reading: every accessor names the key path it was looking at, so a bad document gets one line
// "SOURCE: records[3].time.median_s: expected a number, got string".

namespace {

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw std::runtime_error(fmt::format("{}: {}: {}", source_, where, what));
  }

  const json& object(const json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, fmt::format("expected an object, got {}", j.type_name()));
    return j;
  }

  // nullptr when the key is absent.
  const json* find(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }

  const json& required(const json& obj, const char* key, const std::string& where) const {
    const json* v = find(obj, key);
    if (!v) fail(join(where, key), "missing");
    return *v;
  }

  std::string string(const json& obj, const char* key, const std::string& where) const {
    const json& v = required(obj, key, where);
    if (!v.is_string()) fail(join(where, key), fmt::format("expected a string, got {}", v.type_name()));
    return v.get<std::string>();
  }

  bool boolean(const json& obj, const char* key, const std::string& where) const {
    const json& v = required(obj, key, where);
    if (!v.is_boolean()) fail(join(where, key), fmt::format("expected true or false, got {}", v.type_name()));
    return v.get<bool>();
  }

  std::int64_t integer(const json& obj, const char* key, const std::string& where) const {
    const json& v = required(obj, key, where);
    if (v.is_number_unsigned()) {
      if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(join(where, key), "integer out of range");
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (!v.is_number_integer())
      fail(join(where, key), fmt::format("expected an integer, got {}", describe(v)));
    return v.get<std::int64_t>();
  }

  int small_integer(const json& obj, const char* key, const std::string& where) const {
    const std::int64_t v = integer(obj, key, where);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
      fail(join(where, key), "integer out of range");
    return static_cast<int>(v);
  }

  // A number, or null for a non-finite one (NaN).
  double number(const json& v, const std::string& where) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) fail(where, fmt::format("expected a number, got {}", v.type_name()));
    return v.get<double>();
  }
  double number(const json& obj, const char* key, const std::string& where) const {
    return number(required(obj, key, where), join(where, key));
  }
  std::optional<double> optional_number(const json& obj, const char* key,
                                        const std::string& where) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    return number(*v, join(where, key));
  }

  // A json member that may be absent or null (-> null), else must have the given shape.
  json nullable(const json& obj, const char* key, const std::string& where, bool want_object,
                bool want_array) const {
    const json* v = find(obj, key);
    if (!v || v->is_null()) return nullptr;
    if (want_object && !v->is_object())
      fail(join(where, key), fmt::format("expected an object or null, got {}", v->type_name()));
    if (want_array && !v->is_array())
      fail(join(where, key), fmt::format("expected an array or null, got {}", v->type_name()));
    return *v;
  }

  static std::string join(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }

 private:
  static std::string describe(const json& v) {
    if (v.is_number_float()) return fmt::format("{}", v.get<double>());
    return v.type_name();
  }
  std::string source_;
};

Ceilings ceilings_from_json(const Reader& rd, const json& j, const std::string& w) {
  rd.object(j, w);
  Ceilings c;
  c.source = rd.string(j, "source", w);
  c.device = rd.string(j, "device", w);
  c.dram_GBps = rd.number(j, "dram_GBps", w);
  c.peak_dram_GBps = rd.number(j, "peak_dram_GBps", w);
  c.l2_GBps = rd.optional_number(j, "l2_GBps", w).value_or(0.0);  // absent: unknown
  c.fp32_GFLOPs = rd.number(j, "fp32_GFLOPs", w);
  c.l2_bytes = rd.integer(j, "l2_bytes", w);
  c.sm_count = rd.small_integer(j, "sm_count", w);
  return c;
}

ModelPoint model_from_json(const Reader& rd, const json& j, const std::string& w) {
  rd.object(j, w);
  ModelPoint m;
  const std::string traffic = rd.string(j, "traffic", w);
  const auto t = parse_traffic_model(traffic);
  if (!t)
    rd.fail(Reader::join(w, "traffic"),
            fmt::format("'{}' is not one of fused, unfused, online, copy, compute, two_read", traffic));
  m.traffic = *t;
  m.dram_read_bytes = rd.number(j, "dram_read_bytes", w);
  m.dram_write_bytes = rd.number(j, "dram_write_bytes", w);
  m.dram_bytes = rd.number(j, "dram_bytes", w);
  m.l2_bytes = rd.number(j, "l2_bytes", w);
  m.passes = rd.number(j, "passes", w);
  m.flops = rd.number(j, "flops", w);
  m.intensity = rd.number(j, "intensity", w);
  m.bound_time_s = rd.number(j, "bound_time_s", w);
  m.bound_GBps = rd.number(j, "bound_GBps", w);
  m.bound = rd.string(j, "bound", w);
  m.note = rd.string(j, "note", w);
  return m;
}

VerifyResult verify_from_json(const Reader& rd, const json& j, const std::string& w) {
  rd.object(j, w);
  VerifyResult v;
  v.passed = rd.boolean(j, "passed", w);
  v.max_rel_err = rd.number(j, "max_rel_err", w);
  v.rel_l2_err = rd.number(j, "rel_l2_err", w);
  v.tolerance = rd.number(j, "tolerance", w);
  v.rows_checked = rd.integer(j, "rows_checked", w);
  v.detail = rd.string(j, "detail", w);
  return v;
}

TimeStats time_from_json(const Reader& rd, const json& j, const std::string& w) {
  rd.object(j, w);
  TimeStats t;
  t.median_s = rd.number(j, "median_s", w);
  t.min_s = rd.number(j, "min_s", w);
  t.max_s = rd.number(j, "max_s", w);
  t.mean_s = rd.number(j, "mean_s", w);
  t.stddev_s = rd.number(j, "stddev_s", w);
  t.cv = rd.number(j, "cv", w);
  t.samples = rd.small_integer(j, "samples", w);
  t.launches_per_sample = rd.small_integer(j, "launches_per_sample", w);
  t.l2_flushed = rd.boolean(j, "l2_flushed", w);
  if (const json* v = rd.find(j, "noise")) {
    const std::string nw = Reader::join(w, "noise");
    rd.object(*v, nw);
    NoiseStats n;
    n.statistic = rd.string(*v, "statistic", nw);
    n.value = rd.number(*v, "value", nw);
    if (std::isnan(n.value)) n.value = std::numeric_limits<double>::infinity();  // null: no interval
    n.target = rd.number(*v, "target", nw);
    n.converged = rd.boolean(*v, "converged", nw);
    n.seconds = rd.number(*v, "seconds", nw);
    n.max_seconds = rd.number(*v, "max_seconds", nw);
    t.noise = n;
  }
  if (const json* v = rd.find(j, "clocks")) {
    const std::string cw = Reader::join(w, "clocks");
    rd.object(*v, cw);
    ClockStats c;
    c.available = rd.boolean(*v, "available", cw);
    if (!c.available) {
      c.unavailable = rd.string(*v, "unavailable", cw);
    } else {
      c.sm_mhz_min = rd.number(*v, "sm_clock_mhz_min", cw);
      c.sm_mhz_max = rd.number(*v, "sm_clock_mhz_max", cw);
      c.readings = rd.small_integer(*v, "readings", cw);
      const json& reasons = rd.required(*v, "reasons", cw);
      if (!reasons.is_array())
        rd.fail(Reader::join(cw, "reasons"), fmt::format("expected an array, got {}", reasons.type_name()));
      for (const json& x : reasons) {
        if (!x.is_string())
          rd.fail(Reader::join(cw, "reasons"), fmt::format("expected strings, got {}", x.type_name()));
        c.reasons.push_back(x.get<std::string>());
      }
      c.throttled = rd.boolean(*v, "throttled", cw);
      if (rd.find(*v, "fell")) c.fell = rd.boolean(*v, "fell", cw);
    }
    t.clocks = c;
  }
  return t;
}

Record record_from_json(const Reader& rd, const json& j, const std::string& w) {
  rd.object(j, w);
  Record r;
  r.kernel = rd.string(j, "kernel", w);
  const std::string dtype = rd.string(j, "dtype", w);
  const auto dt = parse_dtype(dtype);
  if (!dt) rd.fail(Reader::join(w, "dtype"), fmt::format("'{}' is not one of fp32, bf16, fp16", dtype));
  r.dtype = *dt;
  r.M = rd.integer(j, "M", w);
  r.N = rd.integer(j, "N", w);
  r.ld_x = rd.integer(j, "ld_x", w);
  r.ld_y = rd.integer(j, "ld_y", w);
  // The shape every record's numbers are about: a row count or a row length below 1, or a stride
  // shorter than the row, is no problem a kernel ran.
  if (r.M < 1) rd.fail(Reader::join(w, "M"), fmt::format("expected a row count >= 1, got {}", r.M));
  if (r.N < 1) rd.fail(Reader::join(w, "N"), fmt::format("expected a row length >= 1, got {}", r.N));
  if (r.ld_x < r.N)
    rd.fail(Reader::join(w, "ld_x"), fmt::format("expected a row stride >= N = {}, got {}", r.N, r.ld_x));
  if (r.ld_y < r.N)
    rd.fail(Reader::join(w, "ld_y"), fmt::format("expected a row stride >= N = {}, got {}", r.N, r.ld_y));
  r.status = rd.string(j, "status", w);
  if (r.status != "ok" && r.status != "skipped" && r.status != "failed")
    rd.fail(Reader::join(w, "status"), fmt::format("'{}' is not one of ok, skipped, failed", r.status));
  r.reason = rd.string(j, "reason", w);
  r.model = model_from_json(rd, rd.required(j, "model", w), Reader::join(w, "model"));
  if (const json* v = rd.find(j, "verify")) r.verify = verify_from_json(rd, *v, Reader::join(w, "verify"));
  if (const json* v = rd.find(j, "time")) r.time = time_from_json(rd, *v, Reader::join(w, "time"));
  r.effective_GBps = rd.optional_number(j, "effective_GBps", w);
  r.pct_of_copy = rd.optional_number(j, "pct_of_copy", w);
  r.model_GBps = rd.optional_number(j, "model_GBps", w);
  r.counters = rd.nullable(j, "counters", w, /*want_object=*/true, false);
  for (const auto& [name, value] : r.counters.items())
    if (!value.is_number() && !value.is_null())
      rd.fail(Reader::join(w, "counters") + "." + name,
              fmt::format("expected a number, got {}", value.type_name()));
  if (rd.find(j, "counters_reason")) r.counters_reason = rd.string(j, "counters_reason", w);
  r.extra = rd.nullable(j, "extra", w, /*want_object=*/true, false);
  return r;
}

}  // namespace

RunResults results_from_json(const json& j, const std::string& source) {
  const Reader rd(source);
  if (!j.is_object()) rd.fail("(document)", fmt::format("expected an object, got {}", j.type_name()));
  const json* schema = rd.find(j, "schema");
  if (!schema || !schema->is_string() || schema->get<std::string>() != kResultsSchema)
    rd.fail("schema", fmt::format("is {}, expected \"{}\": not a softmax-roofline results document",
                                  schema ? schema->dump() : "missing", kResultsSchema));
  const std::int64_t version = rd.integer(j, "schema_version", "");
  if (version > kResultsSchemaVersion)
    rd.fail("schema_version",
            fmt::format("{} is newer than this softmax-bench reads ({}); use a newer softmax-bench",
                        version, kResultsSchemaVersion));
  if (version < 1) rd.fail("schema_version", fmt::format("{} is not a valid version (>= 1)", version));

  RunResults r;
  r.tool_version = rd.string(j, "tool_version", "");
  r.created = rd.string(j, "created", "");
  r.command = rd.string(j, "command", "");
  r.complete = rd.boolean(j, "complete", "");
  r.config = rd.nullable(j, "config", "", /*want_object=*/true, false);
  r.device = rd.nullable(j, "device", "", /*want_object=*/true, false);
  r.ceilings = ceilings_from_json(rd, rd.required(j, "ceilings", ""), "ceilings");
  const json& records = rd.required(j, "records", "");
  if (!records.is_array()) rd.fail("records", fmt::format("expected an array, got {}", records.type_name()));
  for (std::size_t i = 0; i < records.size(); ++i)
    r.records.push_back(record_from_json(rd, records[i], fmt::format("records[{}]", i)));
  r.claims = rd.nullable(j, "claims", "", false, /*want_array=*/true);
  return r;
}

namespace {

std::string file_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// MiB when whole, else bytes: "16 MiB", "1000 bytes".
std::string size_text(std::uintmax_t bytes) {
  return bytes % (1u << 20) == 0 ? fmt::format("{} MiB", bytes >> 20) : fmt::format("{} bytes", bytes);
}

}  // namespace

InputFileError::InputFileError(const std::filesystem::path& file, std::string why)
    : std::runtime_error(fmt::format("{}: {}", file.string(), why)), reason(std::move(why)) {}

std::string read_input_file(const std::filesystem::path& file, std::uintmax_t max_bytes,
                            const std::string& what) {
  const auto fail = [&](std::string why) { throw InputFileError(file, std::move(why)); };
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ELOOP) fail("a symlink loop (too many levels of symbolic links)");
    if (err == ENOENT && ::lstat(file.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(file, ec);
      fail(fmt::format("a symlink to a missing file ({})", ec ? "?" : target.string()));
    }
    if (err == ENOENT) fail("no such file");
    fail(fmt::format("cannot read: {}", std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) fail("a directory, not a file");
  if (!S_ISREG(st.st_mode)) fail(fmt::format("not a regular file ({})", file_kind(st.st_mode)));
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    fail(fmt::format("{} bytes, larger than the {} {} may be", st.st_size, size_text(max_bytes), what));

  // O_NONBLOCK: if the path changed into a FIFO since stat, open does not wait for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail("changed while being opened");
  // The size may change under us (a file being written): read at most one byte past the cap.
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const std::uintmax_t room = max_bytes + 1 - text.size();
    const ssize_t n = ::read(fd, buf, static_cast<std::size_t>(std::min<std::uintmax_t>(sizeof buf, room)));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes)
      fail(fmt::format("grew past the {} {} may be while it was read", size_text(max_bytes), what));
  }
  return text;
}

RunResults read_results(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, kMaxResultsBytes, "a results file");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
  return results_from_json(j, file.string());
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

namespace {

// Closes the descriptor and removes the temporary unless released: every early exit cleans up.
class TempFile {
 public:
  TempFile(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!released_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  int close_fd() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  void release() { released_ = true; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool released_ = false;
};

[[noreturn]] void write_failed(const std::filesystem::path& file, const std::string& step, int err) {
  throw std::runtime_error(
      fmt::format("{}: cannot write ({}: {}); the previous file, if any, is unchanged", file.string(),
                  step, std::strerror(err)));
}

}  // namespace

void write_file_atomic(const std::filesystem::path& file, const std::string& content) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";

  // A name no one else uses: this process's id and a per-process counter; O_EXCL makes sure.
  int fd = -1;
  std::filesystem::path tmp;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = file;
    tmp += fmt::format(".tmp.{}.{}", static_cast<long>(::getpid()), counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) write_failed(file, "create " + tmp.filename().string(), errno);
  }
  if (fd < 0) write_failed(file, "create a temporary file", EEXIST);
  TempFile guard(tmp, fd);

  const char* data = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(guard.fd(), data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_failed(file, "write", errno);
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(guard.fd()) != 0) write_failed(file, "fsync", errno);
  if (guard.close_fd() != 0) write_failed(file, "close", errno);
  if (::rename(tmp.c_str(), file.c_str()) != 0) write_failed(file, "rename", errno);
  guard.release();

  // Make the rename itself durable. The file is already complete and in place, so a directory
  // that cannot be opened or synced (some file systems refuse) is not an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void write_results(const std::filesystem::path& file, const RunResults& r) {
  write_file_atomic(file, to_json(r).dump(2) + "\n");
}

void mark_clock_drops(RunResults& run) {
  double top = 0, bottom = std::numeric_limits<double>::infinity();
  int watched = 0, fell = 0, throttled = 0;
  std::string unavailable;
  for (const Record& r : run.records) {
    if (!r.time || !r.time->clocks) continue;
    const ClockStats& c = *r.time->clocks;
    if (!c.available) {
      if (unavailable.empty()) unavailable = c.unavailable;
      continue;
    }
    top = std::max(top, c.sm_mhz_max);
    bottom = std::min(bottom, c.sm_mhz_min);
  }
  for (Record& r : run.records) {
    if (!r.time || !r.time->clocks || !r.time->clocks->available) continue;
    ClockStats& c = *r.time->clocks;
    c.fell = c.throttled || c.sm_mhz_min < top * (1.0 - kClockFellFraction);
    ++watched;
    fell += *c.fell ? 1 : 0;
    throttled += c.throttled ? 1 : 0;
  }
  if (!run.device.is_object()) run.device = json::object();
  if (watched == 0) {
    run.device["clocks"] = {{"available", false},
                            {"unavailable", unavailable.empty() ? "no record has clock readings"
                                                                : unavailable}};
    return;
  }
  run.device["clocks"] = {{"available", true},
                          {"sm_clock_mhz_max", top},
                          {"sm_clock_mhz_min", bottom},
                          {"fell_below_fraction", kClockFellFraction},
                          {"records_watched", watched},
                          {"records_fell", fell},
                          {"records_throttled", throttled},
                          {"how", "NVML SM clock and clock-event reasons, read before, every few "
                                  "samples during, and after each record's samples; clocks never "
                                  "locked"}};
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace smr
