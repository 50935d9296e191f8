#include "cli/format/slurm_yaml.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace lockstep::cli {
namespace {

using Json = nlohmann::ordered_json;

// Marks a plain scalar may hold anywhere but at its start.
constexpr std::string_view kSafeMarks = "_-./@+()=~^$;<>,%";

bool IsAlnum(unsigned char c) {
  return std::isalnum(c) != 0;
}

// Text that YAML reads back as itself, plain: letters, digits and a few safe marks, starting
// with a letter, a digit, '_', '/' or '(' (never an indicator or "..."/"---"), single inner
// spaces, and no ": " or trailing ':' that would make it a key. Explicit !!str tags keep
// "true", "null" and "12" strings.
bool PlainSafe(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  const auto first = static_cast<unsigned char>(s.front());
  if (!IsAlnum(first) && first != '_' && first != '/' && first != '(') return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (IsAlnum(c) || kSafeMarks.find(static_cast<char>(c)) != std::string_view::npos) continue;
    // ": " would start a value and "  " is folded; s[i + 1] is '\0' at the end.
    if ((c == ':' || c == ' ') && s[i + 1] != ' ') continue;
    return false;  // '#', quotes, brackets, indicators, control characters, non-ASCII
  }
  return true;
}

// "\x1B" for a byte, "\u0085" for a code point.
void AppendEscape(std::string& out, const char* form, unsigned code) {
  char buf[12];
  std::snprintf(buf, sizeof buf, form, code);
  out += buf;
}

// Double-quoted, with YAML's escapes for what would not read back as written: control
// characters, and the Unicode line breaks (NEL, LS, PS), C1 controls and BOM that YAML folds
// or refuses. Other UTF-8 passes through.
std::string DoubleQuoted(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto next = [&](std::size_t k) {
      return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
    };
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      AppendEscape(out, "\\x%02X", c);
    } else if (c == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {
      AppendEscape(out, "\\u%04X", next(1));  // U+0080..U+009F: its code is its second byte
      ++i;
    } else if (c == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9)) {
      out += next(2) == 0xa8 ? "\\L" : "\\P";
      i += 2;
    } else if (c == 0xef && next(1) == 0xbb && next(2) == 0xbf) {
      out += "\\uFEFF";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

std::string Number(const Json& v) {
  if (v.is_number_integer()) return "!!int " + v.dump();
  // The shortest text that reads back as the same double. (Not std::to_chars: in libstdc++ it
  // needs libm, which lockstep-slurm does not load.)
  const double d = v.get<double>();
  if (!std::isfinite(d)) return "!!null null";  // as nlohmann's dump writes NaN and infinities
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string text = buf;
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";  // 1 -> 1.0, as a float
  return "!!float " + text;
}

// A scalar or an empty collection, inline: "!!str x", "!!seq []".
std::string Inline(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "!!null null";
    case Json::value_t::boolean:
      return v.get<bool>() ? "!!bool true" : "!!bool false";
    case Json::value_t::string:
      return "!!str " + slurm_yaml::Scalar(v.get<std::string>());
    case Json::value_t::array:
      return "!!seq []";
    case Json::value_t::object:
      return "!!map {}";
    default:
      return Number(v);  // integers and floats (JSON has no other kind)
  }
}

bool IsBlock(const Json& v) {
  return (v.is_array() || v.is_object()) && !v.empty();
}

void EmitMap(std::string& out, const Json& map, int indent);
void EmitSeq(std::string& out, const Json& seq, int indent);

// What follows "key:" or "-": a scalar on the line, or a tag and the collection below.
void EmitValue(std::string& out, const Json& v, int map_indent, int seq_indent) {
  if (!IsBlock(v)) {
    out += ' ' + Inline(v) + '\n';
  } else if (v.is_object()) {
    out += " !!map\n";
    EmitMap(out, v, map_indent);
  } else {
    out += " !!seq\n";
    EmitSeq(out, v, seq_indent);
  }
}

void EmitMap(std::string& out, const Json& map, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const auto& [key, value] : map.items()) {
    const std::string scalar = slurm_yaml::Scalar(key);
    // An implicit key is at most 1024 characters in YAML; a longer one is an explicit "? key".
    if (scalar.size() > 1000) {
      out += pad + "? !!str " + scalar + '\n' + pad + ':';
    } else {
      out += pad + "!!str " + scalar + ':';
    }
    // libyaml: a mapping's entries two deeper, a sequence's items at the key's column.
    EmitValue(out, value, indent + 2, indent);
  }
}

void EmitSeq(std::string& out, const Json& seq, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const Json& item : seq) {
    out += pad + '-';
    EmitValue(out, item, indent + 2, indent + 2);
  }
}

}  // namespace

namespace slurm_yaml {
std::string Scalar(const std::string& text) {
  return PlainSafe(text) ? text : DoubleQuoted(text);
}
}  // namespace slurm_yaml

std::string SlurmYaml(const nlohmann::ordered_json& doc) {
  std::string out = "%YAML 1.1\n---";
  EmitValue(out, doc, 0, 0);
  out += "...\n";
  return out;
}

}  // namespace lockstep::cli
