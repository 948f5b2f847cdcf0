// Text helpers of the config loader: user text made printable in one-line messages, the nearest
// valid key for a typo, overflow-checked integer arithmetic, and how a plain scalar reads (YAML 1.2
// core schema).
#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/detail/config_tree.hpp"

namespace smr::detail {

namespace {

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

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view without_sign(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return s;
}

}  // namespace

std::string printable(std::string_view s, std::size_t max_shown) {
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

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

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

}  // namespace smr::detail
