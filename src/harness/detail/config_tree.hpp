// The config loader's inner pieces (config_text.cpp, config_parse.cpp, config_values.cpp,
// config_schema.cpp): the document tree both parsers build, and the text helpers its messages and
// checks use. Not part of the harness's interface (config.hpp is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smr::detail {

// ---- text (config_text.cpp) -------------------------------------------------------------------

// User text inside a message: non-printable bytes escaped and long text cut, so a message stays
// one readable line whatever the input holds.
std::string printable(std::string_view s, std::size_t max_shown = 40);
std::string in_quotes(std::string_view s);  // 'printable(s)'
std::string join(const std::vector<std::string>& words);  // "a, b, c"

// "; did you mean 'warmup'?" when a candidate is close, else the list of valid words. Closest by
// edit distance ignoring case, ties broken by the distance with case ('m' suggests 'M', not 'N').
std::string suggestion(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view kind);

// Whether nlohmann::json can write `s` (valid UTF-8): what reaches `normalized` must be.
bool is_utf8(const std::string& s);

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);  // nullopt on overflow
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b);
bool is_power_of_two(std::int64_t v);

// Plain scalars, read the way the YAML 1.2 core schema reads them (a JSON number, true, false or
// null is written the same way); a quoted scalar is always a string.
bool is_integer_text(std::string_view s);
bool is_special_float(std::string_view s);  // .inf, -.inf, .nan in their YAML spellings
bool is_float_text(std::string_view s);
bool is_bool_text(std::string_view s, bool& value);

// ---- the document tree (config_parse.cpp) -----------------------------------------------------

struct Pos {
  int line = 1;
  int column = 1;
};

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
inline const Node* body(const Node* n) { return n->alias_of ? n->alias_of : n; }

// The text, checked for control characters and parsed as JSON (`json`) or as the first YAML
// document, as a tree whose nodes live in `nodes`. Throws ConfigError naming `source`.
const Node* parse_config_text(const std::string& text, const std::string& source, bool json,
                              std::deque<Node>& nodes);

}  // namespace smr::detail
