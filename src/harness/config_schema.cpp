// The config schema (docs/config.md lists every key): the walk from the document's root through
// kernels, dtypes, shapes and sweep, timing, counters and verify, with the expanded shapes checked
// for size and the config as understood written back as `normalized`. load_config_text here needs
// no registry: the kernel names come in (config.cpp passes the registry's, the fuzz target its
// own).
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "harness/detail/config_walker.hpp"
#include "kernels/lab/lab_build.hpp"  // plain C++: the "unknown kernel" hint for lab-only names

namespace smr {

namespace detail {

namespace {

// The key names of each mapping of the schema, in the order docs/config.md lists them.
const std::vector<std::string> kTopKeys{"name",    "description", "kernels", "dtypes",
                                        "shapes",  "sweep",       "row_pad", "timing",
                                        "counters", "verify",     "seed",    "output_dir"};
const std::vector<std::string> kSweepKeys{"N", "M", "elements"};
const std::vector<std::string> kRangeKeys{"from", "to"};
const std::vector<std::string> kTimingKeys{"warmup",   "min_repetitions", "min_time_s",
                                            "flush_l2", "noise_target",    "max_seconds_per_record"};
const std::vector<std::string> kCounterKeys{"enabled", "metrics"};
const std::vector<std::string> kVerifyKeys{"tolerance"};
const std::vector<std::string> kDtypeNames{"fp32", "bf16", "fp16"};

constexpr int kMaxCount = 1'000'000;     // warm-up launches, repetitions
constexpr double kMaxTimeS = 3600.0;     // min_time_s: an hour per case is surely a unit mistake
constexpr double kMaxNoiseTarget = 0.5;  // noise_target: a 50% spread is no criterion at all
constexpr int kIntermediateBytes = 4;    // the unfused pipeline keeps exp(x - max) in fp32

}  // namespace

std::vector<std::string> Walker::read_kernels(const Value& v) const {
  const std::vector<Value> list = kind(v) == Kind::list ? items(v) : std::vector<Value>{v};
  if (kind(v) != Kind::list && kind(v) != Kind::string)
    expected(v, "a kernel name, `all`, or a list of them");
  if (list.empty()) fail(v, "empty kernel list: name at least one kernel, or `all`");
  std::vector<std::string> out;
  std::set<std::string> from_all;
  for (const Value& item : list) {
    if (kind(item) != Kind::string) expected(item, "a kernel name");
    const std::string name = item.node->text;
    std::vector<std::string> add;
    if (name == "all") {
      add = names_.all;
    } else if (std::find(names_.known.begin(), names_.known.end(), name) != names_.known.end()) {
      add = {name};
    } else {
      std::vector<std::string> choices = names_.known;
      choices.push_back("all");
      const std::string hint = lab_build_hint(name);
      fail(item, "unknown kernel " + in_quotes(name) +
                     (hint.empty() ? suggestion(name, choices, "kernels") : hint));
    }
    for (const auto& k : add) {
      if (std::find(out.begin(), out.end(), k) != out.end())
        fail(item, fmt::format("kernel '{}' listed twice{}", k,
                               from_all.count(k) || name == "all" ? " (`all` includes it)" : ""));
      if (name == "all") from_all.insert(k);
      out.push_back(k);
    }
  }
  return out;
}

std::vector<DType> Walker::read_dtypes(const Value& v) const {
  const std::vector<Value> list = kind(v) == Kind::list ? items(v) : std::vector<Value>{v};
  if (kind(v) != Kind::list && kind(v) != Kind::string)
    expected(v, "a dtype name or a list of them");
  if (list.empty()) fail(v, "empty dtype list: name at least one of fp32, bf16, fp16");
  std::vector<DType> out;
  for (const Value& item : list) {
    if (kind(item) != Kind::string) expected(item, "a dtype name");
    const std::string& name = item.node->text;
    const std::optional<DType> t = parse_dtype(name);
    if (!t) fail(item, "unknown dtype " + in_quotes(name) + suggestion(name, kDtypeNames, "dtypes"));
    if (std::find(out.begin(), out.end(), *t) != out.end())
      fail(item, fmt::format("dtype '{}' listed twice", name));
    out.push_back(*t);
  }
  return out;
}

// An integer set: one integer, a list of them, or a power-of-two range {from: A, to: B} that
// doubles from A up to B.
std::vector<Item> Walker::read_int_set(const Value& v) const {
  switch (kind(v)) {
    case Kind::integer: return {Item{read_int(v), v}};
    case Kind::list: {
      std::vector<Item> out;
      for (const Value& item : items(v)) out.push_back(Item{read_int(item), item});
      if (out.empty()) fail(v, "empty list: the sweep would have no shapes");
      return out;
    }
    case Kind::mapping: {
      const Fields f = fields(v, kRangeKeys);
      const Value* from = field(f, "from");
      const Value* to = field(f, "to");
      if (!from || !to)
        fail(v, fmt::format("a range needs both `from` and `to`; `{}` is missing",
                            from ? "to" : "from"));
      const std::int64_t lo = read_int(*from), hi = read_int(*to);
      if (!is_power_of_two(lo)) fail(*from, fmt::format("expected a power of two, found {}", lo));
      if (!is_power_of_two(hi)) fail(*to, fmt::format("expected a power of two, found {}", hi));
      if (lo > hi)
        fail(v, fmt::format("empty range: from = {} is greater than to = {}", lo, hi));
      std::vector<Item> out;
      for (std::int64_t x = lo;; x *= 2) {
        out.push_back(Item{x, v});
        if (x == hi) break;
      }
      return out;
    }
    default:
      expected(v, "an integer, a list of integers or a power-of-two range {from: A, to: B}");
  }
}

std::int64_t Walker::read_positive(const Value& v, std::string_view what) const {
  const std::int64_t x = read_int(v);
  if (x <= 0) fail(v, fmt::format("{} must be > 0, found {}", what, x));
  return x;
}

void Walker::read_shapes(const Value& v, std::vector<Shape>& shapes) const {
  if (kind(v) != Kind::list) expected(v, "a list of [M, N] pairs");
  const std::vector<Value> list = items(v);
  if (list.empty()) fail(v, "empty list: the sweep would have no shapes");
  if (list.size() > kMaxShapes)
    fail(v, fmt::format("{} shapes; the loader accepts at most {}", list.size(), kMaxShapes));
  for (const Value& item : list) {
    if (kind(item) != Kind::list || item.node->children.size() != 2)
      expected(item, "an [M, N] pair");
    const std::vector<Value> mn = items(item);
    shapes.push_back(Shape{read_positive(mn[0], "M"), read_positive(mn[1], "N"), item});
  }
}

void Walker::read_sweep(const Value& v, std::vector<Shape>& shapes) const {
  const Fields f = fields(v, kSweepKeys);
  const Value* n = field(f, "N");
  const Value* m = field(f, "M");
  const Value* elements = field(f, "elements");
  if (!n) fail(v, "missing key `N` (the row lengths to sweep)");
  if (m && elements) fail(*elements, "give either `M` or `elements`, not both");
  if (!m && !elements)
    fail(v, "missing key `M` (rows) or `elements` (a fixed M x N, M derived from it)");

  const std::vector<Item> ns = read_int_set(*n);
  const std::vector<Item> outer = read_int_set(m ? *m : *elements);
  for (const Item& i : ns)
    if (i.value <= 0) fail(i.at, fmt::format("N must be > 0, found {}", i.value));
  for (const Item& i : outer)
    if (i.value <= 0)
      fail(i.at, fmt::format("{} must be > 0, found {}", m ? "M" : "elements", i.value));
  if (ns.size() > kMaxShapes / outer.size() || shapes.size() + ns.size() * outer.size() > kMaxShapes)
    fail(v, fmt::format("the sweep has more than {} shapes", kMaxShapes));

  for (const Item& in : ns) {
    for (const Item& io : outer) {
      if (m) {
        shapes.push_back(Shape{io.value, in.value, in.at});
      } else {
        if (io.value % in.value != 0)
          fail(io.at, fmt::format("elements = {} is not a multiple of N = {}: M = elements / N "
                                  "must be a whole number of rows",
                                  io.value, in.value));
        shapes.push_back(Shape{io.value / in.value, in.value, in.at, true});
      }
    }
  }
}

void Walker::read_timing(const Value& v, TimingPolicy& t) const {
  const Fields f = fields(v, kTimingKeys);
  if (const Value* x = field(f, "warmup")) t.warmup = static_cast<int>(read_int_in(*x, 0, kMaxCount));
  if (const Value* x = field(f, "min_repetitions"))
    t.min_repetitions = static_cast<int>(read_int_in(*x, 1, kMaxCount));
  if (const Value* x = field(f, "min_time_s")) {
    t.min_time_s = read_number(*x);
    if (t.min_time_s < 0 || t.min_time_s > kMaxTimeS)
      fail(*x, fmt::format("expected seconds from 0 to {}, found {}", kMaxTimeS, t.min_time_s));
  }
  if (const Value* x = field(f, "flush_l2")) t.flush_l2 = read_bool(*x);
  if (const Value* x = field(f, "noise_target")) {
    t.noise_target = read_number(*x);
    if (!(t.noise_target > 0 && t.noise_target <= kMaxNoiseTarget))
      fail(*x, fmt::format("expected a relative spread above 0 and at most {} (0.005 = 0.5%), "
                           "found {}",
                           kMaxNoiseTarget, t.noise_target));
  }
  if (const Value* x = field(f, "max_seconds_per_record")) {
    t.max_seconds_per_record = read_number(*x);
    if (!(t.max_seconds_per_record >= 0 && t.max_seconds_per_record <= kMaxTimeS))
      fail(*x, fmt::format("expected seconds from 0 to {}, found {}", kMaxTimeS,
                           t.max_seconds_per_record));
  }
}

void Walker::read_counters(const Value& v, CounterPolicy& c) const {
  const Fields f = fields(v, kCounterKeys);
  if (const Value* x = field(f, "enabled")) c.enabled = read_bool(*x);
  if (const Value* x = field(f, "metrics")) {
    if (kind(*x) != Kind::list) expected(*x, "a list of metric names ([] for the default set)");
    for (const Value& item : items(*x)) {
      std::string name = read_nonempty_string(item);
      if (std::find(c.metrics.begin(), c.metrics.end(), name) != c.metrics.end())
        fail(item, fmt::format("metric {} listed twice", in_quotes(name)));
      c.metrics.push_back(std::move(name));
    }
  }
}

SweepConfig Walker::read(const Node* root_node) {
  const Value root{root_node, "", root_node->pos};
  if (kind(root) != Kind::mapping)
    expected(root, "a mapping of config keys (name, kernels, shapes or sweep, ...)");
  const Fields f = fields(root, kTopKeys);

  SweepConfig c;
  c.source = source_;
  const Value* name = field(f, "name");
  if (!name) fail(Value{root.node, "name", root.pos}, "missing required key (the sweep's name)");
  c.name = read_nonempty_string(*name);
  if (const Value* x = field(f, "description")) c.description = read_string(*x);
  c.kernels = field(f, "kernels") ? read_kernels(*field(f, "kernels")) : names_.all;
  c.dtypes = field(f, "dtypes") ? read_dtypes(*field(f, "dtypes")) : std::vector<DType>{DType::f32};

  const Value* row_pad = field(f, "row_pad");
  if (row_pad) {
    c.row_pad = read_int(*row_pad);
    if (c.row_pad < 0)
      fail(*row_pad, fmt::format("the row stride N + row_pad must be >= N: row_pad must be >= 0, "
                                 "found {}",
                                 c.row_pad));
  }
  if (const Value* x = field(f, "timing")) read_timing(*x, c.timing);
  if (const Value* x = field(f, "counters")) read_counters(*x, c.counters);
  if (const Value* x = field(f, "verify")) {
    const Fields vf = fields(*x, kVerifyKeys);
    if (const Value* t = field(vf, "tolerance")) {
      c.tolerance = read_number(*t);
      if (!(c.tolerance > 0 && c.tolerance <= 1))
        fail(*t, fmt::format("expected a relative tolerance in (0, 1], found {}", c.tolerance));
    }
  }
  if (const Value* x = field(f, "seed")) c.seed = read_uint64(*x);
  if (const Value* x = field(f, "output_dir")) c.output_dir = read_nonempty_string(*x);

  // Shapes: the explicit pairs first, then the sweep's, each checked once.
  std::vector<Shape> shapes;
  if (const Value* x = field(f, "shapes")) read_shapes(*x, shapes);
  if (const Value* x = field(f, "sweep")) read_sweep(*x, shapes);
  if (shapes.empty())
    fail(root, "empty sweep: give `shapes` ([M, N] pairs) or a `sweep` (N with M or elements)");

  std::map<std::pair<std::int64_t, std::int64_t>, Pos> seen;
  for (const Shape& s : shapes) {
    const auto [it, fresh] = seen.emplace(std::pair{s.M, s.N}, s.at.pos);
    if (!fresh)
      fail(s.at, fmt::format("shape [{}, {}] appears twice (first at line {}, column {})", s.M, s.N,
                             it->second.line, it->second.column));
    for (DType t : c.dtypes) {
      // x and y with their strides, and the unfused pipeline's M x N fp32 intermediate: only
      // checked for overflow here. Whether a shape fits a device is decided when the run starts,
      // against the card at hand (harness/sweep_plan.hpp).
      const auto needs = [&](std::int64_t pad) -> std::optional<std::int64_t> {
        const std::optional<std::int64_t> ld = checked_add(s.N, pad);
        if (!ld) return std::nullopt;
        const auto row_bytes = checked_mul(*ld, dtype_bytes(t));
        const auto one = row_bytes ? checked_mul(*row_bytes, s.M) : std::nullopt;
        const auto mn = checked_mul(s.M, s.N);
        const auto intermediate = mn ? checked_mul(*mn, kIntermediateBytes) : std::nullopt;
        const auto xy = one ? checked_add(*one, *one) : std::nullopt;
        return xy && intermediate ? checked_add(*xy, *intermediate) : std::nullopt;
      };
      if (needs(c.row_pad)) continue;
      // The shape fits unpadded: the padding is what is too large, so the error points at it.
      if (row_pad && needs(0))
        fail(*row_pad, fmt::format("{} makes shape [{}, {}] (line {}) in {} need more than 2^63 "
                                   "bytes for x, y and the unfused intermediate",
                                   c.row_pad, s.M, s.N, s.at.pos.line, to_string(t)));
      fail(s.at, fmt::format("shape [{}, {}] in {} needs more than 2^63 bytes for x, y and the "
                             "unfused intermediate",
                             s.M, s.N, to_string(t)));
    }
  }
  for (DType t : c.dtypes)
    for (const Shape& s : shapes) {
      c.problems.push_back(Problem{s.M, s.N, s.N + c.row_pad, s.N + c.row_pad, t});
      c.shrinkable.push_back(s.from_elements);
    }

  // The config as understood: every default filled in and the sweep expanded to explicit
  // shapes. It is itself a valid config that loads back to the same `normalized`.
  nlohmann::json j;
  j["name"] = c.name;
  j["description"] = c.description;
  j["kernels"] = c.kernels;
  j["dtypes"] = nlohmann::json::array();
  for (DType t : c.dtypes) j["dtypes"].push_back(std::string(to_string(t)));
  j["shapes"] = nlohmann::json::array();
  for (const Shape& s : shapes) j["shapes"].push_back({s.M, s.N});
  j["row_pad"] = c.row_pad;
  j["timing"] = {{"warmup", c.timing.warmup},
                 {"min_repetitions", c.timing.min_repetitions},
                 {"min_time_s", c.timing.min_time_s},
                 {"flush_l2", c.timing.flush_l2},
                 {"noise_target", c.timing.noise_target},
                 {"max_seconds_per_record", c.timing.max_seconds_per_record}};
  j["counters"] = {{"enabled", c.counters.enabled}, {"metrics", c.counters.metrics}};
  j["verify"] = {{"tolerance", c.tolerance}};
  j["seed"] = c.seed;
  j["output_dir"] = c.output_dir;
  c.normalized = std::move(j);
  return c;
}

}  // namespace detail

SweepConfig load_config_text(const std::string& text, const std::string& source, bool json,
                             const KernelNames& names) {
  std::deque<detail::Node> nodes;
  const detail::Node* root = detail::parse_config_text(text, source, json, nodes);
  return detail::Walker(source, names).read(root);
}

}  // namespace smr
