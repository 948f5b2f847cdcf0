// The config loader's parsers: a config text becomes a small tree of our own whose every node
// keeps its line and column -- YAML by yaml-cpp's parser (its events, with their YAML::Mark), JSON
// by nlohmann::json's SAX parser, strictly (no comments, no trailing commas, no YAML-only syntax: a
// .json file is JSON or a "malformed JSON" error at its byte). The schema walk (config_schema.cpp)
// reads the tree. Also ConfigError, the one exception the loader throws.
#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/depthguard.h>  // YAML::DeepRecursion (yaml-cpp >= 0.7)
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "harness/config.hpp"
#include "harness/detail/config_tree.hpp"

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

}  // namespace smr

namespace smr::detail {

namespace {

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

const Node* parse_config_text(const std::string& text, const std::string& source, bool json,
                              std::deque<Node>& nodes) {
  check_characters(text, source, json);
  return json ? parse_json(text, source, nodes) : parse_yaml(text, source, nodes);
}

}  // namespace smr::detail
