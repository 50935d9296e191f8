#include "common/duration.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstddef>

namespace lockstep {
namespace {

constexpr std::string_view kForms =
    "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, "
    "days-hours:minutes:seconds or UNLIMITED";

// Each field is capped so that days * 86400 + ... can never overflow an int64.
constexpr std::int64_t kMaxField = 1'000'000'000'000;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgument(fmt::format("invalid time '{}': {}", text, why));
}

// One field of digits, no sign, no spaces.
Result<std::int64_t> ParseField(std::string_view whole, std::string_view field,
                                std::string_view name) {
  if (field.empty()) return BadDuration(whole, fmt::format("{} is empty; {}", name, kForms));
  for (char c : field) {
    if (c < '0' || c > '9') {
      return BadDuration(whole, fmt::format("{} '{}' is not a number; {}", name, field, kForms));
    }
  }
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || v > kMaxField) {
    return BadDuration(whole, fmt::format("{} '{}' is too large", name, field));
  }
  return v;
}

Status CheckBelow(std::string_view whole, std::int64_t v, std::int64_t limit,
                  std::string_view name) {
  if (v >= limit) {
    return BadDuration(whole, fmt::format("{} ({}) must be below {}", name, v, limit));
  }
  return Status::Ok();
}

// Splits "a:b:c" into at most three fields; returns the count, or 0 when there are more.
std::size_t SplitColons(std::string_view s, std::array<std::string_view, 3>& out) {
  std::size_t n = 0;
  while (true) {
    std::size_t colon = s.find(':');
    if (n == out.size()) return 0;
    out[n++] = s.substr(0, colon);
    if (colon == std::string_view::npos) return n;
    s.remove_prefix(colon + 1);
  }
}

}  // namespace

Result<Seconds> ParseSlurmDuration(std::string_view text) {
  if (EqualsIgnoreCase(text, "infinite") || EqualsIgnoreCase(text, "unlimited") || text == "-1") {
    return kUnlimited;
  }
  if (text.empty()) return BadDuration(text, "the time is empty");

  std::int64_t days = 0;
  std::string_view rest = text;
  const std::size_t dash = text.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    Result<std::int64_t> d = ParseField(text, text.substr(0, dash), "days");
    if (!d.ok()) return d.status();
    days = *d;
    rest = text.substr(dash + 1);
  }

  std::array<std::string_view, 3> f;
  const std::size_t n = SplitColons(rest, f);
  if (n == 0) return BadDuration(text, fmt::format("too many ':' fields; {}", kForms));
  std::array<std::int64_t, 3> v{};
  // Names of the fields in each form, for the messages.
  static constexpr std::array<std::array<std::string_view, 3>, 3> kPlainNames = {{
      {"minutes", "", ""},
      {"minutes", "seconds", ""},
      {"hours", "minutes", "seconds"},
  }};
  static constexpr std::array<std::string_view, 3> kDayNames = {"hours", "minutes", "seconds"};
  for (std::size_t i = 0; i < n; ++i) {
    std::string_view name = has_days ? kDayNames[i] : kPlainNames[n - 1][i];
    Result<std::int64_t> r = ParseField(text, f[i], name);
    if (!r.ok()) return r.status();
    v[i] = *r;
  }

  std::int64_t total = 0;
  if (has_days) {
    // days-hours[:minutes[:seconds]]
    LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[0], 24, "hours"));
    if (n > 1) LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[1], 60, "minutes"));
    if (n > 2) LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[2], 60, "seconds"));
    total = days * 86400 + v[0] * 3600 + v[1] * 60 + v[2];
  } else if (n == 1) {
    total = v[0] * 60;
  } else if (n == 2) {
    LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[1], 60, "seconds"));
    total = v[0] * 60 + v[1];
  } else {
    LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[1], 60, "minutes"));
    LOCKSTEP_RETURN_IF_ERROR(CheckBelow(text, v[2], 60, "seconds"));
    total = v[0] * 3600 + v[1] * 60 + v[2];
  }
  if (total >= kUnlimited) return BadDuration(text, "the time is too large");
  return total;
}

std::string FormatSlurmDuration(Seconds seconds) {
  if (seconds < 0) return "INVALID";
  if (seconds >= kUnlimited) return "UNLIMITED";
  const std::int64_t days = seconds / 86400;
  const std::int64_t hours = seconds / 3600 % 24;
  const std::int64_t minutes = seconds / 60 % 60;
  const std::int64_t secs = seconds % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, secs);
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
  return fmt::format("{}:{:02}", minutes, secs);
}

Result<std::int64_t> ParseMemoryMb(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format("invalid memory size '{}': {}", text, why));
  };
  if (text.empty()) return bad("the size is empty");
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ptr == text.data()) return bad("expected a number with an optional unit K, M, G or T");
  if (ec == std::errc::result_out_of_range) return bad("the size is too large");
  std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  if (unit.size() > 1) return bad(fmt::format("unknown unit '{}'; expected K, M, G or T", unit));
  const char u = unit.empty() ? 'M' : unit[0];
  // Sizes above 2^62 MB are not memory; the cap also keeps the shifts below from overflowing.
  constexpr std::uint64_t kMaxMb = std::uint64_t{1} << 62;
  std::uint64_t mb = 0;
  switch (u) {
    case 'K':
    case 'k':
      mb = value / 1024 + (value % 1024 != 0 ? 1 : 0);
      break;
    case 'M':
    case 'm':
      mb = value;
      break;
    case 'G':
    case 'g':
      mb = value > (kMaxMb >> 10) ? kMaxMb + 1 : value << 10;
      break;
    case 'T':
    case 't':
      mb = value > (kMaxMb >> 20) ? kMaxMb + 1 : value << 20;
      break;
    default:
      return bad(fmt::format("unknown unit '{}'; expected K, M, G or T", unit));
  }
  if (mb > kMaxMb) return bad("the size is too large");
  return static_cast<std::int64_t>(mb);
}

std::string FormatSlurmSpan(Seconds seconds) {
  const long long s = seconds < 0 ? 0 : static_cast<long long>(seconds);
  char buf[48];
  if (s >= 86400)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", s / 86400, s / 3600 % 24,
                  s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace lockstep
