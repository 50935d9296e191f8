#include "cli/format/field_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <tuple>
#include <utility>

#include "common/hostlist.h"

namespace lockstep::cli {

Result<FormatSpec> ParseFormat(std::string_view format, std::string_view command) {
  FormatSpec spec;
  std::size_t pos = format.find('%');
  spec.prefix = std::string(format.substr(0, pos));
  while (pos != std::string_view::npos) {
    std::size_t i = pos + 1;
    if (i < format.size() && format[i] == '%') {  // "%%": a literal percent sign
      std::string& tail = spec.fields.empty() ? spec.prefix : spec.fields.back().suffix;
      tail += '%';
      pos = format.find('%', i + 1);
      std::size_t end = pos == std::string_view::npos ? format.size() : pos;
      tail += format.substr(i + 1, end - i - 1);
      continue;
    }
    FieldSpec field;
    if (i < format.size() && format[i] == '.') {
      field.right = true;
      ++i;
    }
    if (i < format.size() && format[i] == '#') {
      field.auto_width = true;
      ++i;
    } else {
      while (i < format.size() && std::isdigit(static_cast<unsigned char>(format[i]))) {
        field.width = field.width * 10 + (format[i] - '0');
        if (field.width > 100000) {
          return InvalidArgument(
              fmt::format("{}: field width too large in format '{}'", command, format));
        }
        ++i;
      }
    }
    if (i >= format.size() || format[i] == '%') {
      return InvalidArgument(
          fmt::format("{}: format '{}' has a '%' without a field letter", command, format));
    }
    field.letter = format[i++];
    pos = format.find('%', i);
    std::size_t end = pos == std::string_view::npos ? format.size() : pos;
    field.suffix = std::string(format.substr(i, end - i));
    spec.fields.push_back(std::move(field));
  }
  return spec;
}

std::string FitField(std::string_view value, int width, bool right, bool cut) {
  if (width <= 0) return std::string(value);
  std::string out;
  if (!right) {
    out = std::string(value.substr(0, static_cast<std::size_t>(width)));
  } else {
    std::size_t w = static_cast<std::size_t>(width);
    if (value.size() < w) out.assign(w - value.size(), ' ');
    out += value;
    if (cut && out.size() > w) out.resize(w);
  }
  if (out.size() < static_cast<std::size_t>(width)) out.append(width - out.size(), ' ');
  return out;
}

namespace {

std::string ClockString(Seconds t) {
  Seconds seconds = t % 60, minutes = (t / 60) % 60, hours = (t / 3600) % 24, days = t / 86400;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  if (hours) return fmt::format("{}:{:02}:{:02}", hours, minutes, seconds);
  return fmt::format("{}:{:02}", minutes, seconds);
}

}  // namespace

std::string SqueueDuration(Seconds seconds) {
  if (seconds < 0 || seconds > 365LL * 24 * 3600) return "INVALID";
  return ClockString(seconds);
}

std::string SinfoDuration(Seconds seconds) {
  if (seconds < 0) return "INVALID";
  return ClockString(seconds);
}

std::string LongDuration(Seconds t) {
  if (t < 0) return "INVALID";
  Seconds seconds = t % 60, minutes = (t / 60) % 60, hours = (t / 3600) % 24, days = t / 86400;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  return fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds);
}

namespace {

std::string Strftime(Time t, const char* pattern) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  if (localtime_r(&tt, &tm) == nullptr) return "Unknown";
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof(buf), pattern, &tm);
  return std::string(buf, n);
}

}  // namespace

std::string TimeStamp(Time t) {
  return Strftime(t, "%Y-%m-%dT%H:%M:%S");
}

std::string TresPerText(std::string_view tres) {
  std::string out(tres);
  for (std::size_t at = out.find("gres/"); at != std::string::npos; at = out.find("gres/", at))
    out[at + 4] = ':';
  return out;
}

std::string DateLine(Time now) {
  return Strftime(now, "%a %b %d %H:%M:%S %Y");  // slurm_ctime2: "Wed Dec 02 ..."
}

std::string ConvertUnits(std::int64_t value, int unit_index) {
  static constexpr char kUnits[] = {'\0', 'K', 'M', 'G', 'T', 'P'};
  if (value == 0) return "0";
  int unit = std::clamp(unit_index, 0, 5);
  while (value >= 1024 && value % 1024 == 0 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return kUnits[unit] ? fmt::format("{}{}", value, kUnits[unit]) : fmt::format("{}", value);
}

namespace {

// The escape of one control byte: "\n", "\t", "\r", else "\xHH".
void AppendEscape(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\r':
      out += "\\r";
      return;
    default:
      out += fmt::format("\\x{:02x}", c);
  }
}

// The code point of a bidirectional formatting character (or a line or paragraph separator)
// that starts at text[i], in UTF-8, and its length; 0 when there is none.
std::pair<char32_t, std::size_t> DirectionControlAt(std::string_view text, std::size_t i) {
  auto byte = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  if (byte(0) == 0xd8 && byte(1) == 0x9c) return {U'\u061c', 2};  // ARABIC LETTER MARK
  if (byte(0) != 0xe2) return {0, 0};
  const char32_t cp = (char32_t{byte(1)} & 0x3f) << 6 | (char32_t{byte(2)} & 0x3f);
  const char32_t full = 0x2000 | cp;
  if ((byte(1) & 0xc0) != 0x80 || (byte(2) & 0xc0) != 0x80 || byte(1) > 0x81) return {0, 0};
  // LRM, RLM; LINE and PARAGRAPH SEPARATOR, LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI.
  if (full == 0x200e || full == 0x200f || (full >= 0x2028 && full <= 0x202e) ||
      (full >= 0x2066 && full <= 0x2069))
    return {full, 3};
  return {0, 0};
}

}  // namespace

std::string EscapeControl(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (auto [cp, length] = DirectionControlAt(text, i); length > 0) {
      // Text that reorders what follows it on the line (U+202E) is shown, never obeyed.
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
      i += length - 1;
    } else if (c < 0x20 || c == 0x7f) {
      AppendEscape(out, c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // A C1 control in UTF-8 (CSI is U+009B): both bytes escaped.
      AppendEscape(out, c);
      AppendEscape(out, static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string JStr(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return EscapeControl(it->get_ref<const std::string&>());
}

std::optional<std::int64_t> JInt(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_unsigned()) return static_cast<std::int64_t>(it->get<std::uint64_t>());
  if (it->is_number_float()) return static_cast<std::int64_t>(it->get<double>());
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  return std::nullopt;
}

std::int64_t JIntOr(const nlohmann::json& object, std::string_view key, std::int64_t fallback) {
  return JInt(object, key).value_or(fallback);
}

double JDouble(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return 0.0;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return 0.0;
  return it->get<double>();
}

bool JBool(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return false;
  auto it = object.find(key);
  if (it == object.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() != 0.0;
  return false;
}

bool JIsNull(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return false;
  auto it = object.find(key);
  return it != object.end() && it->is_null();
}

Result<std::vector<const nlohmann::json*>> Records(const nlohmann::json& input,
                                                   std::string_view key) {
  const nlohmann::json* list = &input;
  if (input.is_object()) {
    auto it = input.find(key);
    if (it == input.end()) {
      return InvalidArgument(fmt::format("expected a JSON array or an object with \"{}\"", key));
    }
    list = &*it;
  } else if (input.is_null()) {
    return std::vector<const nlohmann::json*>{};
  }
  if (!list->is_array()) {
    return InvalidArgument(fmt::format("expected \"{}\" to be a JSON array", key));
  }
  std::vector<const nlohmann::json*> records;
  records.reserve(list->size());
  for (const auto& record : *list) {
    if (!record.is_object()) {
      return InvalidArgument(fmt::format("a \"{}\" entry is not a JSON object", key));
    }
    records.push_back(&record);
  }
  return records;
}

namespace {

// The parts of a host name hostlist_sort compares: the text before the trailing digits, then
// their value (names without digits sort before numbered ones of the same prefix).
std::tuple<std::string, bool, std::uint64_t, std::size_t> HostKey(const std::string& host) {
  std::size_t end = host.size();
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(host[start - 1]))) --start;
  if (start == end || end - start > 18) return {host, false, 0, 0};
  return {host.substr(0, start), true, std::stoull(host.substr(start)), end - start};
}

}  // namespace

bool HostNameLess(const std::string& a, const std::string& b) {
  return HostKey(a) < HostKey(b);
}

std::string SortedHostlist(std::vector<std::string> hosts) {
  std::stable_sort(hosts.begin(), hosts.end(), HostNameLess);
  return CompressHostlist(hosts);
}

}  // namespace lockstep::cli
