// --begin (times in local time, as Slurm reads them) and --export (the job's environment).
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobspec/sbatch.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

constexpr std::string_view kBeginForms =
    "is not a begin time (expected now[+N[seconds|minutes|hours|days|weeks]], HH:MM[:SS], "
    "YYYY-MM-DD[THH:MM[:SS]], today, tomorrow, midnight, noon, elevenses, fika or teatime)";

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

// A field of 1 to max_len digits, below limit.
std::optional<int> Field(std::string_view s, std::size_t max_len, int limit) {
  if (s.empty() || s.size() > max_len) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v >= limit) return std::nullopt;
  return v;
}

std::tm LocalTm(Time t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  return tm;
}

// The Unix time of a local date and time. Strict: nullopt when the date does not exist (Feb 30);
// otherwise out-of-range fields carry over (day 32 is the first of the next month).
std::optional<Time> FromLocal(int year, int month, int day, int hour, int minute, int second,
                              bool strict = false) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  if (strict && (tm.tm_mday != day || tm.tm_mon != month - 1)) return std::nullopt;
  return static_cast<Time>(t);
}

// "HH:MM[:SS]" as hours, minutes and seconds.
std::optional<std::array<int, 3>> ParseClock(std::string_view s) {
  std::array<int, 3> v{0, 0, 0};
  std::size_t n = 0;
  while (true) {
    const std::size_t colon = s.find(':');
    if (n == 3) return std::nullopt;
    std::optional<int> f = Field(s.substr(0, colon), 2, n == 0 ? 24 : 60);
    if (!f) return std::nullopt;
    v[n++] = *f;
    if (colon == std::string_view::npos) break;
    s.remove_prefix(colon + 1);
  }
  if (n < 2) return std::nullopt;
  return v;
}

// Today at a clock time, or tomorrow when that time has passed (Slurm's rule).
std::optional<Time> NextClock(Time now, int hour, int minute, int second) {
  const std::tm today = LocalTm(now);
  std::optional<Time> t =
      FromLocal(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday, hour, minute, second);
  if (t && *t < now) {
    t = FromLocal(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday + 1, hour, minute, second);
  }
  return t;
}

std::optional<Time> ParseNowPlus(std::string_view s, Time now) {
  if (s.empty()) return now;
  if (s[0] != '+') return std::nullopt;
  s.remove_prefix(1);
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits == 0 || digits > 12) return std::nullopt;
  std::int64_t n = 0;
  std::from_chars(s.data(), s.data() + digits, n);
  const std::string_view unit = s.substr(digits);
  struct Unit {
    std::string_view name;
    std::int64_t seconds;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},         {"s", 1},         {"sec", 1},        {"secs", 1},    {"second", 1},
      {"seconds", 1},  {"min", 60},      {"mins", 60},      {"minute", 60}, {"minutes", 60},
      {"h", 3600},     {"hour", 3600},   {"hours", 3600},   {"d", 86400},   {"day", 86400},
      {"days", 86400}, {"week", 604800}, {"weeks", 604800},
  };
  for (const Unit& u : kUnits) {
    if (EqualsIgnoreCase(unit, u.name)) return now + n * u.seconds;
  }
  return std::nullopt;
}

std::optional<Time> ParseDate(std::string_view s) {
  const std::size_t t = s.find('T');
  const std::string_view date = s.substr(0, t);
  if (date.size() < 8 || date[4] != '-') return std::nullopt;
  const std::size_t dash = date.find('-', 5);
  if (dash == std::string_view::npos) return std::nullopt;
  std::optional<int> year = Field(date.substr(0, 4), 4, 10000);
  std::optional<int> month = Field(date.substr(5, dash - 5), 2, 13);
  std::optional<int> day = Field(date.substr(dash + 1), 2, 32);
  if (!year || !month || !day || *year < 1970 || *month == 0 || *day == 0) return std::nullopt;
  std::array<int, 3> clock{0, 0, 0};
  if (t != std::string_view::npos) {
    std::optional<std::array<int, 3>> c = ParseClock(s.substr(t + 1));
    if (!c) return std::nullopt;
    clock = *c;
  }
  return FromLocal(*year, *month, *day, clock[0], clock[1], clock[2], /*strict=*/true);
}

// Splits an --export list at commas outside quotes, and drops the quotes.
Result<std::vector<std::string>> SplitExportList(std::string_view text) {
  std::vector<std::string> items(1);
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        items.back() += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      items.emplace_back();
    } else {
      items.back() += c;
    }
  }
  if (quote != 0) return InvalidArgument("is not an export list: a quote is not closed");
  return items;
}

}  // namespace

Result<Time> ParseBeginTime(std::string_view text, Time now) {
  std::optional<Time> t;
  const std::tm today = LocalTm(now);
  const int y = today.tm_year + 1900;
  const int m = today.tm_mon + 1;
  const int d = today.tm_mday;
  if (text.size() >= 3 && EqualsIgnoreCase(text.substr(0, 3), "now")) {
    t = ParseNowPlus(text.substr(3), now);
  } else if (EqualsIgnoreCase(text, "today")) {
    t = FromLocal(y, m, d, 0, 0, 0);
  } else if (EqualsIgnoreCase(text, "tomorrow") || EqualsIgnoreCase(text, "midnight")) {
    t = FromLocal(y, m, d + 1, 0, 0, 0);
  } else if (EqualsIgnoreCase(text, "noon")) {
    t = NextClock(now, 12, 0, 0);
  } else if (EqualsIgnoreCase(text, "elevenses")) {
    t = NextClock(now, 11, 0, 0);
  } else if (EqualsIgnoreCase(text, "fika")) {
    t = NextClock(now, 15, 0, 0);
  } else if (EqualsIgnoreCase(text, "teatime")) {
    t = NextClock(now, 16, 0, 0);
  } else if (text.find('-') != std::string_view::npos) {
    t = ParseDate(text);
  } else if (std::optional<std::array<int, 3>> c = ParseClock(text)) {
    t = NextClock(now, (*c)[0], (*c)[1], (*c)[2]);
  }
  if (!t) return InvalidArgument(std::string(kBeginForms));
  return *t;
}

}  // namespace lockstep::jobspec::sbatch_internal

namespace lockstep::jobspec {
Result<Time> ParseSlurmTime(std::string_view text, Time now) {
  // "now-1hour" (sacct -S): the distance of "now+1hour", backwards.
  if (text.size() > 4 && sbatch_internal::EqualsIgnoreCase(text.substr(0, 3), "now") &&
      text[3] == '-') {
    Result<Time> ahead =
        sbatch_internal::ParseBeginTime("now+" + std::string(text.substr(4)), now);
    if (!ahead.ok()) return ahead.status();
    return now - (*ahead - now);
  }
  return sbatch_internal::ParseBeginTime(text, now);
}
}  // namespace lockstep::jobspec

namespace lockstep::jobspec::sbatch_internal {

bool IsVarName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

Result<std::map<std::string, std::string>> ExportEnvironment(
    std::string_view text, const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& file_vars) {
  Result<std::vector<std::string>> items = SplitExportList(text);
  if (!items.ok()) return items.status();
  bool all = false;
  bool none = false;  // NONE or NIL
  std::vector<std::pair<std::string, std::optional<std::string>>> vars;
  for (const std::string& item : *items) {
    if (EqualsIgnoreCase(item, "all")) {
      all = true;
    } else if (EqualsIgnoreCase(item, "none") || EqualsIgnoreCase(item, "nil")) {
      none = true;
    } else {
      const std::size_t eq = item.find('=');
      const std::string name = item.substr(0, eq);
      if (!IsVarName(name)) {
        return InvalidArgument(
            fmt::format("is not an export list: '{}' is not a variable name", name));
      }
      vars.emplace_back(
          name, eq == std::string::npos ? std::nullopt : std::optional(item.substr(eq + 1)));
    }
  }
  if (all && none) return InvalidArgument("is not an export list: it mixes ALL and NONE");
  std::map<std::string, std::string> out;
  if (all) {
    out = env;
  } else {
    // Without ALL, only the SLURM_* variables of the submitter travel (sbatch(1)).
    for (const auto& [k, v] : env) {
      if (k.rfind("SLURM_", 0) == 0) out.emplace(k, v);
    }
  }
  // Slurm 22.05 drops --export-file's variables with NONE, and lets them win over the
  // submitter's own.
  if (!none) {
    for (const auto& [k, v] : file_vars) out[k] = v;
  }
  for (const auto& [name, value] : vars) {
    if (value) {
      out[name] = *value;  // an explicit value wins, also over ALL (Slurm lets ALL win)
    } else if (auto it = env.find(name); it != env.end()) {
      out[name] = it->second;
    }
  }
  return out;
}

}  // namespace lockstep::jobspec::sbatch_internal
