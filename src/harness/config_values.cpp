// The values of a config: each value's type as the document spells it, the entries of a mapping
// checked against its schema (unknown keys with the nearest known one, keys given twice), and the
// typed readers (strings, booleans, integers in range, numbers) the schema walk uses.
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>

#include "harness/detail/config_walker.hpp"

namespace smr::detail {

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

}  // namespace smr::detail
