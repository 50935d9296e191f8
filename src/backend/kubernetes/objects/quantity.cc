#include "backend/kubernetes/objects/quantity.h"

#include <limits>
#include <optional>

namespace lockstep::kube {
namespace {

using Int128 = __int128;

constexpr Int128 kMax = std::numeric_limits<std::int64_t>::max();
// Intermediate products stay below this, so one more factor of 1024 cannot overflow 128 bits;
// a negative power of ten may still bring them back under kMax.
constexpr Int128 kGuard = Int128{1} << 116;
// More significant digits than any real quantity has; keeps the arithmetic inside 128 bits.
constexpr int kMaxDigits = 30;

// A parsed quantity: digits x 10^exp10 x 1024^exp1024.
struct Parsed {
  Int128 digits = 0;
  int exp10 = 0;
  int exp1024 = 0;
};

Status Bad(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid quantity \"" + std::string(text) + "\": " + std::string(why));
}

constexpr std::string_view kExpected =
    "expected a number with an optional suffix (m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or "
    "e<exponent>)";

// The suffix's powers, or nullopt when it is not one.
std::optional<Parsed> Suffix(std::string_view s) {
  Parsed p;
  if (s.empty()) return p;
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    std::size_t at = kBinary.find(s[0]);
    if (at == std::string_view::npos) return std::nullopt;
    p.exp1024 = static_cast<int>(at) + 1;
    return p;
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'm':
        p.exp10 = -3;
        return p;
      case 'k':
        p.exp10 = 3;
        return p;
      case 'M':
        p.exp10 = 6;
        return p;
      case 'G':
        p.exp10 = 9;
        return p;
      case 'T':
        p.exp10 = 12;
        return p;
      case 'P':
        p.exp10 = 15;
        return p;
      case 'E':
        p.exp10 = 18;
        return p;
      default:
        break;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return std::nullopt;
  std::string_view e = s.substr(1);
  bool negative = false;
  if (!e.empty() && (e[0] == '+' || e[0] == '-')) negative = e[0] == '-', e.remove_prefix(1);
  if (e.empty() || e.size() > 4) return std::nullopt;
  int v = 0;
  for (char c : e) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  p.exp10 = negative ? -v : v;
  return p;
}

Result<Parsed> Parse(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return Bad(text, "empty");
  if (s[0] == '+') s.remove_prefix(1);
  if (!s.empty() && s[0] == '-') return Bad(text, "resource quantities cannot be negative");
  Parsed p;
  int digits = 0, fraction = 0;
  bool dot = false, any = false;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (dot) return Bad(text, kExpected);
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any = true;
    if (p.digits == 0 && c == '0') {  // leading zeros carry no digits
      if (dot) ++fraction;
      continue;
    }
    if (++digits > kMaxDigits) return Bad(text, "too many digits");
    p.digits = p.digits * 10 + (c - '0');
    if (dot) ++fraction;
  }
  if (!any) return Bad(text, kExpected);
  std::optional<Parsed> suffix = Suffix(s.substr(i));
  if (!suffix) return Bad(text, kExpected);
  p.exp10 = suffix->exp10 - fraction;
  p.exp1024 = suffix->exp1024;
  return p;
}

// digits x 10^exp10 x 1024^exp1024 x scale, rounded up; nullopt on overflow of int64.
std::optional<std::int64_t> Evaluate(Parsed p, std::int64_t scale) {
  Int128 v = p.digits * scale;  // digits < 10^30, scale <= 1000: fits
  if (v == 0) return 0;
  for (int k = 0; k < p.exp1024; ++k) {
    if (v > kGuard) return std::nullopt;
    v *= 1024;
  }
  if (p.exp10 >= 0) {
    for (int k = 0; k < p.exp10; ++k) {
      if (v > kMax) return std::nullopt;
      v *= 10;
    }
  } else {
    Int128 div = 1;
    int k = 0;
    for (; k < -p.exp10 && div <= v; ++k) div *= 10;
    if (k < -p.exp10) return 1;  // a positive amount below one unit rounds up to one
    v = (v + div - 1) / div;
  }
  if (v > kMax) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

Result<std::int64_t> Convert(std::string_view text, std::int64_t scale) {
  Result<Parsed> p = Parse(text);
  if (!p.ok()) return p.status();
  std::optional<std::int64_t> v = Evaluate(*p, scale);
  if (!v) return Bad(text, "too large");
  return *v;
}

Result<std::int64_t> ConvertJson(const nlohmann::json& value, std::int64_t scale) {
  if (value.is_string()) return Convert(value.get_ref<const std::string&>(), scale);
  if (value.is_number_integer()) return Convert(value.dump(), scale);
  return InvalidArgument("invalid quantity " + value.dump() + ": expected a string");
}

}  // namespace

Result<std::int64_t> ParseQuantityMilli(std::string_view text) {
  return Convert(text, 1000);
}

Result<std::int64_t> ParseQuantity(std::string_view text) {
  return Convert(text, 1);
}

Result<std::int64_t> QuantityMilliFromJson(const nlohmann::json& value) {
  return ConvertJson(value, 1000);
}

Result<std::int64_t> QuantityFromJson(const nlohmann::json& value) {
  return ConvertJson(value, 1);
}

std::string FormatCpuMilli(std::int64_t milli) {
  LOCKSTEP_CHECK(milli >= 0);
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string FormatMemoryMiB(std::int64_t mib) {
  LOCKSTEP_CHECK(mib >= 0);
  return std::to_string(mib) + "Mi";
}

}  // namespace lockstep::kube
