// The schema walk of the config loader (config_values.cpp: values and their types;
// config_schema.cpp: the schema): one pass over the document tree that reads every key once,
// checks its type and its range, and rejects what it does not know, so every error points at the
// key or value it is about.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "harness/config.hpp"
#include "harness/detail/config_tree.hpp"

namespace smr::detail {

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
  bool from_elements = false;  // M = sweep.elements / N
};

using Fields = std::map<std::string, Value, std::less<>>;

inline const Value* field(const Fields& f, std::string_view key) {
  const auto it = f.find(key);
  return it == f.end() ? nullptr : &it->second;
}

inline std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

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

}  // namespace smr::detail
