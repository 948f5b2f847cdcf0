// The sweep-config loader: one schema, written in YAML or JSON (docs/config.md lists every key).
//
// How a text becomes a SweepConfig:
//   1. The text is parsed into a small tree of our own whose every node keeps its line and
//      column: YAML by yaml-cpp's parser (its events, with their YAML::Mark), JSON by
//      nlohmann::json's SAX parser, strictly (no comments, no trailing commas, no YAML-only
//      syntax: a .json file is JSON or a "malformed JSON" error at its byte).
//   2. One walk over the schema reads every key once, checks its type and its range, and rejects
//      what it does not know, so every semantic error points at the key or value it is about.
// Nothing reaches SweepConfig unchecked; sizes are multiplied with overflow checks, never wrapped.
// The loader only throws ConfigError, whatever the input: fuzz/fuzz_config.cpp holds it to that.

#include "harness/config.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion (yaml-cpp >= 0.7)
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "kernels/lab/lab_build.hpp"  // plain C++: the "unknown kernel" hint for lab-only names

// The fuzz target builds the loader alone (no CUDA, no registry, no embedded default): see
// fuzz/CMakeLists.txt. Everything that needs those lives at the end of this file.
#ifndef SMR_CONFIG_LOADER_ONLY
#include "kernels/registry.hpp"
#include "roofline/results.hpp"

namespace smr::detail {
extern const std::string_view embedded_default_config;  // generated from configs/default.yaml
}
#endif

namespace smr {

namespace {

std::string one_line_message(const std::string& file, int line, int column, const std::string& key,
                             const std::string& message) {
  std::string s = file;
  if (line > 0) s += fmt::format(":{}:{}", line, column);
  s += ": ";
  if (!key.empty()) s += key + ": ";
  s += message;
  return s;
}

}  // namespace

ConfigError::ConfigError(std::string file_name, int line_number, int column_number,
                         std::string key_path, const std::string& message)
    : std::runtime_error(
          one_line_message(file_name, line_number, column_number, key_path, message)),
      file(std::move(file_name)),
      line(line_number),
      column(column_number),
      key(std::move(key_path)) {}

namespace {

// ---------------------------------------------------------------------------------------------
// Text helpers

// User text inside a message: non-printable bytes escaped and long text cut, so a message stays
// one readable line whatever the input holds.
std::string printable(std::string_view s, std::size_t max_shown = 40) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > max_shown) out += "...";
  return out;
}

std::string in_quotes(std::string_view s) { return fmt::format("'{}'", printable(s)); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Levenshtein distance, one row at a time.
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i + 1;
    for (std::size_t j = 0; j < b.size(); ++j) {
      const std::size_t above = row[j + 1];
      row[j + 1] = std::min({above + 1, row[j] + 1, diagonal + (a[i] == b[j] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// "; did you mean 'warmup'?" when a candidate is close, else the list of valid words. Closest by
// edit distance ignoring case, ties broken by the distance with case ('m' suggests 'M', not 'N').
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view kind) {
  constexpr std::size_t kLongestCompared = 64;  // past this, a typo of a key is not plausible
  const std::string* best = nullptr;
  std::pair<std::size_t, std::size_t> best_distance{std::numeric_limits<std::size_t>::max(), 0};
  if (word.size() <= kLongestCompared) {
    for (const auto& c : candidates) {
      const std::pair d{edit_distance(lowercase(word), lowercase(c)), edit_distance(word, c)};
      if (d < best_distance) best = &c, best_distance = d;
    }
  }
  if (best && best_distance.first <= std::max<std::size_t>(2, best->size() / 2))
    return fmt::format("; did you mean '{}'?", *best);
  return fmt::format("; {} are: {}", kind, join(candidates));
}

// Whether nlohmann::json can write `s` (valid UTF-8): what reaches `normalized` must be.
bool is_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// ---------------------------------------------------------------------------------------------
// Plain scalars, read the way the YAML 1.2 core schema reads them (a JSON number, true, false or
// null is written the same way); a quoted scalar is always a string.

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view without_sign(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return s;
}

bool is_integer_text(std::string_view s) { return all_digits(without_sign(s)); }

bool is_special_float(std::string_view s) {
  const std::string_view u = without_sign(s);
  if (u == ".inf" || u == ".Inf" || u == ".INF") return true;
  return s == ".nan" || s == ".NaN" || s == ".NAN";
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool is_float_text(std::string_view s) {
  if (is_special_float(s)) return true;
  s = without_sign(s);
  const std::size_t e = s.find_first_of("eE");
  const std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos && !all_digits(without_sign(s.substr(e + 1)))) return false;
  const std::size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return all_digits(mantissa);
  const std::string_view whole = mantissa.substr(0, dot), fraction = mantissa.substr(dot + 1);
  if (whole.empty()) return all_digits(fraction);
  return all_digits(whole) && (fraction.empty() || all_digits(fraction));
}

bool is_bool_text(std::string_view s, bool& value) {
  if (s == "true" || s == "True" || s == "TRUE") return value = true, true;
  if (s == "false" || s == "False" || s == "FALSE") return value = false, true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Positions

struct Pos {
  int line = 1;
  int column = 1;
};

Pos pos_of(const YAML::Mark& m) {
  if (m.line < 0 || m.column < 0) return {};
  return {m.line + 1, m.column + 1};
}

// nlohmann's parse_error::byte is the 1-based index of the last byte read.
Pos pos_of_byte(const std::string& text, std::size_t byte) {
  const std::size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  Pos p;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < index; ++i)
    if (text[i] == '\n') ++p.line, line_start = i + 1;
  p.column = static_cast<int>(index - line_start) + 1;
  return p;
}

// ---------------------------------------------------------------------------------------------
// The document tree

// One node of the parsed document.
struct Node {
  enum class Type { null, scalar, list, mapping };
  Type type = Type::null;
  std::string tag;   // "?" for a plain scalar (a JSON number or literal), "!" for a quoted one
                     // (a JSON string), else an explicit YAML tag
  std::string text;  // a scalar's value
  Pos pos;
  std::vector<const Node*> children;  // a list's items; a mapping's keys and values, alternating
  const Node* alias_of = nullptr;     // a YAML alias (*name): the node it names
  bool open = false;                  // a list or mapping whose end is not parsed yet
};

// The node an entry stands for: itself, or for an alias the anchored node.
const Node* body(const Node* n) { return n->alias_of ? n->alias_of : n; }

// The tree both parsers build: each node is attached to the list or mapping still open, or is the
// root. The nodes live in a deque, whose elements stay put as it grows.
class Tree {
 public:
  explicit Tree(std::deque<Node>& nodes) : nodes_(nodes) {}

  const Node* root() const { return root_; }

  Node& add(Node::Type type, Pos pos, std::string tag, std::string text) {
    Node& n = nodes_.emplace_back();
    n.type = type;
    n.tag = std::move(tag);
    n.text = std::move(text);
    n.pos = pos;
    if (open_.empty())
      root_ = &n;
    else
      open_.back()->children.push_back(&n);
    if (type == Node::Type::list || type == Node::Type::mapping) {
      n.open = true;
      open_.push_back(&n);
    }
    return n;
  }
  void close() {
    if (open_.empty()) return;
    open_.back()->open = false;
    open_.pop_back();
  }

 private:
  std::deque<Node>& nodes_;
  std::vector<Node*> open_;
  const Node* root_ = nullptr;
};

// yaml-cpp's parser events, built into a Tree. (YAML::LoadAll of yaml-cpp 0.7 loops forever on a
// stray ',' at the top level; the parser it is built on does not, and a tree of our own keeps
// positions and aliases explicit.)
class YamlTreeBuilder final : public YAML::EventHandler {
 public:
  YamlTreeBuilder(std::deque<Node>& nodes, std::string source)
      : tree_(nodes), source_(std::move(source)) {}

  const Node* root() const { return tree_.root(); }
  const YAML::Mark& start() const { return start_; }

  void OnDocumentStart(const YAML::Mark& m) override { start_ = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override {
    add(Node::Type::null, m, "", "", anchor);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    const Pos p = pos_of(m);
    if (it == anchors_.end())  // yaml-cpp reports this itself; kept so the tree is always whole
      throw ConfigError(source_, p.line, p.column, "", "malformed YAML: alias to no anchor");
    if (it->second->open)
      throw ConfigError(source_, p.line, p.column, "",
                        "malformed YAML: an alias inside the node it names");
    // An alias is a leaf of its own (its position is the alias's) standing for the anchored node.
    Node& n = tree_.add(Node::Type::null, p, "", "");
    n.alias_of = it->second;
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    add(Node::Type::scalar, m, tag, value, anchor);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    add(Node::Type::list, m, tag, "", anchor);
  }
  void OnSequenceEnd() override { tree_.close(); }
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    add(Node::Type::mapping, m, tag, "", anchor);
  }
  void OnMapEnd() override { tree_.close(); }

 private:
  void add(Node::Type type, const YAML::Mark& m, const std::string& tag, const std::string& text,
           YAML::anchor_t anchor) {
    Node& n = tree_.add(type, pos_of(m), tag, text);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = &n;
  }

  Tree tree_;
  std::string source_;
  std::map<YAML::anchor_t, Node*> anchors_;
  YAML::Mark start_;
};

// Sees where the next YAML document starts and nothing else.
struct DocumentProbe final : YAML::EventHandler {
  YAML::Mark start;
  void OnDocumentStart(const YAML::Mark& m) override { start = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// nlohmann's SAX events, built into a Tree. nlohmann parses and checks the JSON; its events carry
// no positions, so a cursor steps through the text alongside: every event is the next token of
// text nlohmann has just accepted, so finding where it starts only means skipping whitespace, the
// ':' and ',' between tokens, and the token itself.
class JsonTreeBuilder final : public nlohmann::json_sax<nlohmann::json> {
 public:
  JsonTreeBuilder(std::deque<Node>& nodes, const std::string& text) : tree_(nodes), text_(text) {
    if (text_.rfind("\xEF\xBB\xBF", 0) == 0) cursor_ = 3;  // nlohmann skips a UTF-8 BOM too
  }

  const Node* root() const { return tree_.root(); }

  bool null() override { return plain(Node::Type::null); }
  bool boolean(bool) override { return plain(Node::Type::scalar); }
  bool number_integer(number_integer_t) override { return plain(Node::Type::scalar); }
  bool number_unsigned(number_unsigned_t) override { return plain(Node::Type::scalar); }
  bool number_float(number_float_t, const string_t&) override { return plain(Node::Type::scalar); }
  bool string(string_t& value) override { return quoted(value); }
  bool key(string_t& value) override { return quoted(value); }
  bool binary(binary_t&) override { return false; }  // not produced by the JSON parser
  bool start_object(std::size_t) override { return opening(Node::Type::mapping); }
  bool end_object() override { return closing(); }
  bool start_array(std::size_t) override { return opening(Node::Type::list); }
  bool end_array() override { return closing(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    // `position` counts the bytes read: the error is at the last one. A number past double's
    // range is valid syntax; its token is the number alone, and the error points at its start.
    // (Otherwise nlohmann's token text is no guide to where the token starts.)
    number_overflow = e.id == 406;
    error_byte = number_overflow ? position - std::min(position, last_token.size()) + 1 : position;
    error_token = last_token;
    error_message = e.what();
    return false;
  }

  std::size_t error_byte = 0;  // 1-based
  std::string error_token;
  std::string error_message;
  bool number_overflow = false;

 private:
  // Moves to the start of the next token and returns its position.
  Pos next_token() {
    while (cursor_ < text_.size() && std::string_view(" \t\r\n:,").find(text_[cursor_]) !=
                                         std::string_view::npos) {
      if (text_[cursor_] == '\n') ++line_, line_start_ = cursor_ + 1;
      ++cursor_;
    }
    return Pos{line_, static_cast<int>(cursor_ - line_start_) + 1};
  }
  // Moves past a string token (the cursor on its opening quote).
  void skip_string() {
    for (++cursor_; cursor_ < text_.size() && text_[cursor_] != '"'; ++cursor_)
      if (text_[cursor_] == '\\') ++cursor_;  // the escaped character is never the end
    ++cursor_;
  }
  bool plain(Node::Type type) {  // a number, true, false or null: its text as written
    const Pos p = next_token();
    const std::size_t begin = cursor_;
    while (cursor_ < text_.size() && std::string_view(" \t\r\n:,]}").find(text_[cursor_]) ==
                                         std::string_view::npos)
      ++cursor_;
    tree_.add(type, p, "?", text_.substr(begin, cursor_ - begin));
    return true;
  }
  bool quoted(const std::string& value) {
    const Pos p = next_token();
    skip_string();
    tree_.add(Node::Type::scalar, p, "!", value);
    return true;
  }
  bool opening(Node::Type type) {
    const Pos p = next_token();
    ++cursor_;
    tree_.add(type, p, "?", "");
    return true;
  }
  bool closing() {
    next_token();
    ++cursor_;
    tree_.close();
    return true;
  }

  Tree tree_;
  const std::string& text_;
  std::size_t cursor_ = 0;
  int line_ = 1;
  std::size_t line_start_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The walk

// A value in the document: its node, its dotted key path and where an error about it points
// (for an alias, where the alias is written).
struct Value {
  const Node* node = nullptr;
  std::string path;
  Pos pos;
};

enum class Kind { null, boolean, integer, number, string, list, mapping };

struct Item {  // one integer of an integer set, and where it was written
  std::int64_t value = 0;
  Value at;
};

struct Shape {
  std::int64_t M = 0;
  std::int64_t N = 0;
  Value at;
};

using Fields = std::map<std::string, Value, std::less<>>;

const Value* field(const Fields& f, std::string_view key) {
  const auto it = f.find(key);
  return it == f.end() ? nullptr : &it->second;
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

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

class Walker {
 public:
  Walker(std::string source, const KernelNames& names) : source_(std::move(source)), names_(names) {}

  SweepConfig read(const Node* root);

 private:
  [[noreturn]] void fail(const Value& v, const std::string& message) const {
    throw ConfigError(source_, v.pos.line, v.pos.column, v.path, message);
  }
  [[noreturn]] void expected(const Value& v, std::string_view what) const {
    fail(v, fmt::format("expected {}, found {}", what, describe(v)));
  }

  Kind kind(const Value& v) const;
  std::string describe(const Value& v) const;

  Fields fields(const Value& v, const std::vector<std::string>& schema) const;
  std::vector<Value> items(const Value& v) const;

  std::string read_string(const Value& v) const;
  std::string read_nonempty_string(const Value& v) const;
  bool read_bool(const Value& v) const;
  std::int64_t read_int(const Value& v) const;
  std::int64_t read_int_in(const Value& v, std::int64_t lo, std::int64_t hi) const;
  std::uint64_t read_uint64(const Value& v) const;
  double read_number(const Value& v) const;

  std::vector<std::string> read_kernels(const Value& v) const;
  std::vector<DType> read_dtypes(const Value& v) const;
  std::vector<Item> read_int_set(const Value& v) const;
  std::int64_t read_positive(const Value& v, std::string_view what) const;
  void read_shapes(const Value& v, std::vector<Shape>& shapes) const;
  void read_sweep(const Value& v, std::vector<Shape>& shapes) const;
  void read_timing(const Value& v, TimingPolicy& t) const;
  void read_counters(const Value& v, CounterPolicy& c) const;

  std::string source_;
  const KernelNames& names_;
};

Kind Walker::kind(const Value& v) const {
  const Node& n = *v.node;
  switch (n.type) {
    case Node::Type::null: return Kind::null;
    case Node::Type::list: return Kind::list;
    case Node::Type::mapping: return Kind::mapping;
    case Node::Type::scalar: break;
  }
  if (n.tag == "!" || n.tag == "tag:yaml.org,2002:str") return Kind::string;
  if (n.tag != "?") fail(v, fmt::format("YAML tag {} is not supported", in_quotes(n.tag)));
  bool b = false;
  if (is_bool_text(n.text, b)) return Kind::boolean;
  if (is_integer_text(n.text)) return Kind::integer;
  if (is_float_text(n.text)) return Kind::number;
  return Kind::string;
}

std::string Walker::describe(const Value& v) const {
  switch (kind(v)) {
    case Kind::null: return "nothing (null)";
    case Kind::boolean: return v.node->text;
    case Kind::integer: return "the integer " + printable(v.node->text);
    case Kind::number: return "the number " + printable(v.node->text);
    case Kind::string: return "the string " + in_quotes(v.node->text);
    case Kind::list: return "a list";
    case Kind::mapping: return "a mapping";
  }
  return "?";
}

// The entries of a mapping, checked against its schema: a key it does not know (with the nearest
// one it does), a key given twice, or a key that is not a name is an error.
Fields Walker::fields(const Value& v, const std::vector<std::string>& schema) const {
  if (kind(v) != Kind::mapping)
    expected(v, fmt::format("a mapping with keys {}", join(schema)));
  Fields out;
  std::map<std::string, Pos, std::less<>> key_pos;
  const std::vector<const Node*>& entries = v.node->children;
  for (std::size_t i = 0; i + 1 < entries.size(); i += 2) {
    const Node* key_node = entries[i];
    const Node* value_node = entries[i + 1];
    const Value key{body(key_node), v.path, key_node->pos};
    if (key.node->type != Node::Type::scalar)
      fail(key, fmt::format("expected a key name, found {}", describe(key)));
    const std::string& name = key.node->text;
    const std::string path = child_path(v.path, printable(name));
    if (std::find(schema.begin(), schema.end(), name) == schema.end())
      fail(Value{key.node, path, key.pos}, "unknown key" + suggestion(name, schema, "valid keys"));
    if (const auto first = key_pos.find(name); first != key_pos.end())
      fail(Value{key.node, path, key.pos},
           fmt::format("key given twice (first at line {}, column {})", first->second.line,
                       first->second.column));
    key_pos.emplace(name, key.pos);
    // A missing value (`key:` and nothing) is reported at its key.
    const Node* value = body(value_node);
    out.emplace(name, Value{value, path, value->type == Node::Type::null ? key.pos : value_node->pos});
  }
  return out;
}

std::vector<Value> Walker::items(const Value& v) const {
  std::vector<Value> out;
  for (const Node* item : v.node->children)
    out.push_back(Value{body(item), fmt::format("{}[{}]", v.path, out.size()), item->pos});
  return out;
}

std::string Walker::read_string(const Value& v) const {
  if (kind(v) != Kind::string) expected(v, "a string");
  const std::string& s = v.node->text;
  if (!is_utf8(s)) fail(v, "expected a UTF-8 string, found invalid UTF-8 bytes");
  return s;
}

std::string Walker::read_nonempty_string(const Value& v) const {
  std::string s = read_string(v);
  if (s.empty()) fail(v, "expected a non-empty string, found ''");
  return s;
}

bool Walker::read_bool(const Value& v) const {
  bool b = false;
  if (kind(v) != Kind::boolean || !is_bool_text(v.node->text, b))
    expected(v, "true or false");
  return b;
}

std::int64_t Walker::read_int(const Value& v) const {
  if (kind(v) != Kind::integer) expected(v, "an integer");
  std::string_view s = v.node->text;
  if (s[0] == '+') s.remove_prefix(1);  // from_chars takes '-' but not '+'
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size())
    fail(v, fmt::format("integer {} does not fit in 64 bits", printable(v.node->text)));
  return value;
}

std::int64_t Walker::read_int_in(const Value& v, std::int64_t lo, std::int64_t hi) const {
  const std::int64_t value = read_int(v);
  if (value < lo || value > hi)
    fail(v, fmt::format("expected an integer from {} to {}, found {}", lo, hi, value));
  return value;
}

std::uint64_t Walker::read_uint64(const Value& v) const {
  if (kind(v) != Kind::integer) expected(v, "a non-negative integer");
  std::string_view s = v.node->text;
  if (s[0] == '+') s.remove_prefix(1);
  if (s[0] == '-') {
    if (s.find_first_not_of('0', 1) == std::string_view::npos) return 0;  // -0
    expected(v, "a non-negative integer");
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size())
    fail(v, fmt::format("integer {} does not fit in 64 bits", printable(v.node->text)));
  return value;
}

double Walker::read_number(const Value& v) const {
  const Kind k = kind(v);
  if (k != Kind::integer && k != Kind::number) expected(v, "a number");
  const std::string& text = v.node->text;
  if (is_special_float(text)) expected(v, "a finite number");
  std::string_view s = text;
  if (s[0] == '+') s.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(value))
    fail(v, fmt::format("number {} is out of range", printable(text)));
  return value;
}

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
        shapes.push_back(Shape{io.value / in.value, in.value, in.at});
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
      // x and y with their strides, and the unfused pipeline's M x N fp32 intermediate.
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
      const auto fits = [](const std::optional<std::int64_t>& b) {
        return b && *b <= kAssumedDeviceBytes;
      };
      const std::optional<std::int64_t> bytes = needs(c.row_pad);
      if (fits(bytes)) continue;
      const auto said = [](const std::optional<std::int64_t>& b) {
        return b ? std::to_string(*b) : std::string("more than 2^63");
      };
      // The shape fits unpadded: the padding is what is too large, so the error points at it.
      if (row_pad && fits(needs(0)))
        fail(*row_pad, fmt::format("{} makes shape [{}, {}] (line {}) in {} need {} bytes "
                                   "for x, y and the unfused intermediate; the device is assumed "
                                   "to have {}",
                                   c.row_pad, s.M, s.N, s.at.pos.line, to_string(t), said(bytes),
                                   kAssumedDeviceBytes));
      fail(s.at, fmt::format("shape [{}, {}] in {} needs {} bytes for x, y and the unfused "
                             "intermediate; the device is assumed to have {}",
                             s.M, s.N, to_string(t), said(bytes), kAssumedDeviceBytes));
    }
  }
  for (DType t : c.dtypes)
    for (const Shape& s : shapes)
      c.problems.push_back(Problem{s.M, s.N, s.N + c.row_pad, s.N + c.row_pad, t});

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

// ---------------------------------------------------------------------------------------------
// Parsing

// The JSON text as a tree in `nodes`.
const Node* parse_json(const std::string& text, const std::string& source,
                       std::deque<Node>& nodes) {
  JsonTreeBuilder builder(nodes, text);
  if (nlohmann::json::sax_parse(text, &builder, nlohmann::json::input_format_t::json,
                                /*strict=*/true, /*ignore_comments=*/false))
    return builder.root();
  const Pos p = pos_of_byte(text, builder.error_byte);
  if (builder.number_overflow)
    throw ConfigError(source, p.line, p.column, "",
                      "number " + printable(builder.error_token) + " is out of range");
  // "[json.exception.parse_error.101] parse error at line 1, column 4: syntax error ...": keep
  // what follows the position, which we give in our own form.
  std::string_view what = builder.error_message;
  if (const auto c = what.find("column "); c != std::string_view::npos)
    if (const auto colon = what.find(": ", c); colon != std::string_view::npos)
      what.remove_prefix(colon + 2);
  throw ConfigError(source, p.line, p.column, "", "malformed JSON: " + printable(what, 200));
}

// The first YAML document of the text as a tree in `nodes`; a second document is an error.
const Node* parse_yaml(const std::string& text, const std::string& source,
                       std::deque<Node>& nodes) {
  std::istringstream in(text);
  const auto error = [&](const YAML::Mark& m, const std::string& message) {
    const Pos p = pos_of(m);
    return ConfigError(source, p.line, p.column, "", message);
  };
  try {
    YAML::Parser parser(in);
    YamlTreeBuilder builder(nodes, source);
    if (!parser.HandleNextDocument(builder) || !builder.root())
      throw ConfigError(source, 1, 1, "", "empty config: expected a mapping of config keys");
    DocumentProbe next;
    if (parser.HandleNextDocument(next)) {
      // A "document" that starts where the first one did is a stray character yaml-cpp skips
      // without reading (a ',' at the top level).
      const auto at = static_cast<std::size_t>(next.start.pos);
      if (next.start.pos == builder.start().pos && at < text.size())
        throw error(next.start,
                    fmt::format("malformed YAML: unexpected {}", in_quotes(text.substr(at, 1))));
      throw error(next.start, "expected one YAML document, found a second one");
    }
    return builder.root();
  } catch (const YAML::DeepRecursion& e) {
    throw error(e.mark, "malformed YAML: nested too deeply");
  } catch (const YAML::Exception& e) {
    throw error(e.mark, "malformed YAML: " + printable(e.msg, 200));
  }
}

// Control characters other than tab, line feed and carriage return are allowed neither in YAML
// nor in JSON; nlohmann would also take a NUL byte for the end of the input and ignore the rest.
void check_characters(const std::string& text, const std::string& source, bool json) {
  const auto bad = std::find_if(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
  if (bad == text.end()) return;
  const Pos p = pos_of_byte(text, static_cast<std::size_t>(bad - text.begin()) + 1);
  throw ConfigError(source, p.line, p.column, "",
                    fmt::format("malformed {}: control character \\x{:02x} is not allowed",
                                json ? "JSON" : "YAML", static_cast<unsigned char>(*bad)));
}

}  // namespace

SweepConfig load_config_text(const std::string& text, const std::string& source, bool json,
                             const KernelNames& names) {
  check_characters(text, source, json);
  std::deque<Node> nodes;
  const Node* root = json ? parse_json(text, source, nodes) : parse_yaml(text, source, nodes);
  return Walker(source, names).read(root);
}

// ---------------------------------------------------------------------------------------------
// The registry's names, files and the embedded default: not part of the fuzz build.
#ifndef SMR_CONFIG_LOADER_ONLY

KernelNames registry_kernel_names() {
  KernelNames names;
  for (const KernelInfo& k : kernels()) names.known.push_back(k.name);
  names.all = default_kernel_names();
  return names;
}

SweepConfig load_config_text(const std::string& text, const std::string& source, bool json) {
  return load_config_text(text, source, json, registry_kernel_names());
}

SweepConfig load_config_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  // What the path is first (a directory named as a config is "a directory", not a format).
  std::string text;
  try {
    text = read_input_file(path, kMaxConfigBytes, "a config");
  } catch (const InputFileError& e) {
    throw ConfigError(source, 0, 0, "", e.reason);
  }
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (ext != ".yaml" && ext != ".yml" && ext != ".json")
    throw ConfigError(source, 0, 0, "",
                      "unknown config format " + in_quotes(ext) + ": expected .yaml, .yml or .json");
  return load_config_text(text, source, ext == ".json");
}

const std::string& default_config_text() {
  static const std::string text(detail::embedded_default_config);
  return text;
}

SweepConfig default_config() {
  return load_config_text(default_config_text(), "<embedded default>", false);
}

#endif  // SMR_CONFIG_LOADER_ONLY

}  // namespace smr
