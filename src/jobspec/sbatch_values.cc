// Option values: counts, sizes, GPU requests, times, arrays and dependencies. Each parser's
// error message is a fragment that follows "'<value>' " ("is not a GPU count").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/duration.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Digits only, at most max.
std::optional<std::uint64_t> ParseUnsigned(std::string_view s, std::uint64_t max) {
  if (!AllDigits(s)) return std::nullopt;
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v > max) return std::nullopt;
  return v;
}

constexpr std::uint64_t kMaxCount = std::numeric_limits<std::int32_t>::max();

// The part of a common/ parser's message after the quoted text: "invalid time '1:99': seconds
// (99) must be below 60" -> "seconds (99) must be below 60".
std::string Reason(const Status& s) {
  const std::string& m = s.message();
  const std::size_t at = m.find("': ");
  return at == std::string::npos ? m : m.substr(at + 3);
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

bool IsGpuType(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// "name[:type][:count]" of one GRES; count 1 when left out.
Result<GpuRequest> ParseGresEntry(std::string_view entry) {
  if (entry.substr(0, 5) == "gres/") entry.remove_prefix(5);
  const std::vector<std::string_view> parts = Split(entry, ':');
  if (parts[0] != "gpu") {
    if (parts[0].empty()) return InvalidArgument("is not a GRES request: a GRES name is empty");
    return InvalidArgument(fmt::format(
        "is not a GRES request: unknown GRES '{}' (lockstep schedules gpu only)", parts[0]));
  }
  GpuRequest r{1, ""};
  std::string_view count;
  if (parts.size() == 2) {
    if (AllDigits(parts[1])) {
      count = parts[1];
    } else if (IsGpuType(parts[1])) {
      r.type = std::string(parts[1]);
    } else {
      return InvalidArgument(
          fmt::format("is not a GRES request: '{}' is not a GPU type", parts[1]));
    }
  } else if (parts.size() == 3) {
    if (!IsGpuType(parts[1])) {
      return InvalidArgument(
          fmt::format("is not a GRES request: '{}' is not a GPU type", parts[1]));
    }
    r.type = std::string(parts[1]);
    count = parts[2];
  } else if (parts.size() > 3) {
    return InvalidArgument("is not a GRES request: expected gpu[:type][:count]");
  }
  if (!count.empty()) {
    std::optional<std::uint64_t> n = ParseUnsigned(count, kMaxCount);
    if (!n || *n == 0) {
      return InvalidArgument(
          fmt::format("is not a GRES request: '{}' is not a positive GPU count", count));
    }
    r.count = static_cast<std::int32_t>(*n);
  }
  return r;
}

// "N", "a-b" or "a-b:step" of an array, marked in seen.
Status MarkArrayItem(std::string_view item, std::vector<bool>& seen, std::uint64_t& work) {
  auto index = [](std::string_view s) -> Result<std::uint32_t> {
    if (!AllDigits(s)) return InvalidArgument(fmt::format("'{}' is not an index", s));
    std::optional<std::uint64_t> v = ParseUnsigned(s, kMaxArrayIndex);
    if (!v) {
      return InvalidArgument(fmt::format("index {} is above the maximum {}", s, kMaxArrayIndex));
    }
    return static_cast<std::uint32_t>(*v);
  };
  std::string_view range = item;
  std::uint32_t step = 1;
  if (const std::size_t colon = item.find(':'); colon != std::string_view::npos) {
    range = item.substr(0, colon);
    std::optional<std::uint64_t> s = ParseUnsigned(item.substr(colon + 1), kMaxArrayIndex);
    if (!s || *s == 0) {
      return InvalidArgument(fmt::format("'{}' is not a step", item.substr(colon + 1)));
    }
    if (range.find('-') == std::string_view::npos) {
      return InvalidArgument(fmt::format("'{}' has a step but no range", item));
    }
    step = static_cast<std::uint32_t>(*s);
  }
  const std::size_t dash = range.find('-');
  Result<std::uint32_t> lo = index(range.substr(0, dash));
  if (!lo.ok()) return lo.status();
  std::uint32_t hi = *lo;
  if (dash != std::string_view::npos) {
    Result<std::uint32_t> h = index(range.substr(dash + 1));
    if (!h.ok()) return h.status();
    hi = *h;
    if (hi < *lo) return InvalidArgument(fmt::format("range {} is reversed", range));
  }
  work += (hi - *lo) / step + 1;
  if (work > 4 * (std::uint64_t{kMaxArrayIndex} + 1)) {
    return InvalidArgument("its ranges overlap too much");
  }
  if (seen.size() <= hi) seen.resize(std::size_t{hi} + 1, false);
  for (std::uint64_t i = *lo; i <= hi; i += step) seen[i] = true;
  return Status::Ok();
}

// One dependency "type:id[:id...]", "singleton" or (Slurm's old form) "id[:id...]".
Status ParseDependencyItem(std::string_view item, std::vector<DependencySpec>& out) {
  if (item == "singleton") {
    out.push_back(DependencySpec{DependencyType::kSingleton, 0, 0, false});
    return Status::Ok();
  }
  std::vector<std::string_view> parts = Split(item, ':');
  DependencyType type = DependencyType::kAfterAny;
  if (!AllDigits(parts[0])) {
    const std::string_view name = parts[0];
    if (name == "after") {
      type = DependencyType::kAfter;
    } else if (name == "afterany") {
      type = DependencyType::kAfterAny;
    } else if (name == "afterok") {
      type = DependencyType::kAfterOk;
    } else if (name == "afternotok") {
      type = DependencyType::kAfterNotOk;
    } else if (name == "aftercorr") {
      type = DependencyType::kAfterCorr;
    } else if (name == "afterburstbuffer" || name == "expand") {
      return InvalidArgument(fmt::format("'{}' dependencies are not supported by lockstep", name));
    } else {
      return InvalidArgument(fmt::format(
          "unknown dependency type '{}' (after, afterany, afterok, afternotok, aftercorr or "
          "singleton)",
          name));
    }
    parts.erase(parts.begin());
    if (parts.empty()) return InvalidArgument(fmt::format("'{}' names no job", item));
  }
  for (std::string_view id : parts) {
    DependencySpec d{type, 0, 0, false};
    if (const std::size_t plus = id.find('+'); plus != std::string_view::npos) {
      if (type != DependencyType::kAfter) {
        return InvalidArgument(fmt::format(
            "'{}': a delay (+minutes) follows only an 'after' dependency's job", id));
      }
      std::optional<std::uint64_t> minutes =
          ParseUnsigned(id.substr(plus + 1), std::numeric_limits<std::int32_t>::max());
      if (!minutes) {
        return InvalidArgument(
            fmt::format("'{}': the delay after '+' must be a number of minutes", id));
      }
      d.delay_minutes = static_cast<std::int32_t>(*minutes);
      id = id.substr(0, plus);
    }
    std::string_view job = id;
    if (const std::size_t us = id.find('_'); us != std::string_view::npos) {
      job = id.substr(0, us);
      const std::string_view task = id.substr(us + 1);
      if (task != "*") {
        std::optional<std::uint64_t> t = ParseUnsigned(task, kMaxArrayIndex);
        if (!t) return InvalidArgument(fmt::format("'{}' is not a job or array task id", id));
        if (type == DependencyType::kAfterCorr) {
          return InvalidArgument(
              fmt::format("'{}': aftercorr names a whole array, not one of its tasks", id));
        }
        d.array_task = static_cast<std::uint32_t>(*t);
        d.has_task = true;
      }
    }
    std::optional<std::uint64_t> j = ParseUnsigned(job, std::numeric_limits<std::int64_t>::max());
    if (!j || *j == 0) return InvalidArgument(fmt::format("'{}' is not a job id", id));
    d.job = *j;
    out.push_back(d);
  }
  return Status::Ok();
}

}  // namespace

Result<std::int32_t> ParsePositiveCount(std::string_view text) {
  std::optional<std::uint64_t> v = ParseUnsigned(text, kMaxCount);
  if (!v || *v == 0) return InvalidArgument("is not a positive integer");
  return static_cast<std::int32_t>(*v);
}

Result<NodeRange> ParseNodeRange(std::string_view text) {
  const std::size_t dash = text.find('-');
  std::optional<std::uint64_t> lo = ParseUnsigned(text.substr(0, dash), kMaxCount);
  std::optional<std::uint64_t> hi = lo;
  if (dash != std::string_view::npos) hi = ParseUnsigned(text.substr(dash + 1), kMaxCount);
  if (!lo || !hi || *lo == 0 || *hi == 0) {
    return InvalidArgument("is not a node count (N or min-max, at least 1)");
  }
  if (*lo > *hi) return InvalidArgument("is not a node count: the minimum is above the maximum");
  return NodeRange{static_cast<std::int32_t>(*lo), static_cast<std::int32_t>(*hi)};
}

Result<std::int64_t> ParseMemorySize(std::string_view text) {
  // Slurm reads only the letter after the number, so "32GB" and "32Gb" mean 32G.
  std::string_view t = text;
  if (t.size() >= 2 && (t.back() == 'B' || t.back() == 'b') &&
      std::string_view("KkMmGgTt").find(t[t.size() - 2]) != std::string_view::npos) {
    t.remove_suffix(1);
  }
  Result<std::int64_t> mb = ParseMemoryMb(t);
  if (!mb.ok()) return InvalidArgument("is not a memory size: " + Reason(mb.status()));
  return *mb;
}

Result<GpuRequest> ParseGpuCount(std::string_view text) {
  std::string_view t = text;
  if (t.substr(0, 4) == "gpu:") t.remove_prefix(4);
  if (t.find(',') != std::string_view::npos) {
    return InvalidArgument("is not a GPU count: a job takes one GPU type");
  }
  GpuRequest r;
  std::string_view count = t;
  if (const std::size_t colon = t.rfind(':'); colon != std::string_view::npos) {
    if (!IsGpuType(t.substr(0, colon))) return InvalidArgument("is not a GPU count");
    r.type = std::string(t.substr(0, colon));
    count = t.substr(colon + 1);
  }
  std::optional<std::uint64_t> n = ParseUnsigned(count, kMaxCount);
  if (!n) return InvalidArgument("is not a GPU count");
  if (*n == 0) return InvalidArgument("is not a GPU count: it must be at least 1");
  r.count = static_cast<std::int32_t>(*n);
  return r;
}

Result<GpuRequest> ParseGres(std::string_view text) {
  std::optional<GpuRequest> gpu;
  for (std::string_view entry : Split(text, ',')) {
    Result<GpuRequest> r = ParseGresEntry(entry);
    if (!r.ok()) return r.status();
    if (gpu) return InvalidArgument("is not a GRES request: it names gpu twice");
    gpu = *r;
  }
  return *gpu;
}

Result<Seconds> ParseTimeLimit(std::string_view text) {
  Result<Seconds> s = ParseSlurmDuration(text);
  if (!s.ok()) return InvalidArgument("is not a time: " + Reason(s.status()));
  return *s == 0 ? kUnlimited : *s;  // sbatch(1): "A time limit of zero requests that no time
                                     // limit be imposed."
}

Result<ArraySpec> ParseArray(std::string_view text) {
  ArraySpec spec;
  spec.text = std::string(text);
  std::string_view list = text;
  if (const std::size_t pct = text.find('%'); pct != std::string_view::npos) {
    list = text.substr(0, pct);
    std::optional<std::uint64_t> limit = ParseUnsigned(text.substr(pct + 1), kMaxCount);
    if (!limit || *limit == 0) {
      return InvalidArgument(
          fmt::format("is not an array specification: '%{}' is not a positive task limit",
                      text.substr(pct + 1)));
    }
    spec.max_running = static_cast<std::uint32_t>(*limit);
  }
  std::vector<bool> seen;
  std::uint64_t work = 0;
  for (std::string_view item : Split(list, ',')) {
    if (item.empty()) return InvalidArgument("is not an array specification: an entry is empty");
    Status st = MarkArrayItem(item, seen, work);
    if (!st.ok()) return InvalidArgument("is not an array specification: " + st.message());
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) spec.indices.push_back(static_cast<std::uint32_t>(i));
  }
  return spec;
}

Result<Dependencies> ParseDependencies(std::string_view text) {
  const bool all = text.find(',') != std::string_view::npos;
  const bool any = text.find('?') != std::string_view::npos;
  if (all && any) {
    return InvalidArgument(
        "is not a dependency list: ',' (all of) and '?' (any of) cannot be mixed");
  }
  Dependencies deps;
  deps.any = any;
  for (std::string_view item : Split(text, any ? '?' : ',')) {
    if (item.empty()) return InvalidArgument("is not a dependency list: an entry is empty");
    Status st = ParseDependencyItem(item, deps.list);
    if (!st.ok()) return InvalidArgument("is not a dependency list: " + st.message());
  }
  return deps;
}

Result<Switches> ParseSwitches(std::string_view text) {
  const std::size_t at = text.find('@');
  std::optional<std::uint64_t> n = ParseUnsigned(text.substr(0, at), kMaxCount);
  if (!n || *n == 0) return InvalidArgument("is not a switch count (N[@time], N at least 1)");
  Switches s{static_cast<std::int32_t>(*n), 0};
  if (at != std::string_view::npos) {
    Result<Seconds> wait = ParseSlurmDuration(text.substr(at + 1));
    if (!wait.ok()) {
      return InvalidArgument("is not a switch count: the wait " + Reason(wait.status()));
    }
    s.wait = *wait;
  }
  return s;
}

Result<WarnSignal> ParseSignal(std::string_view text) {
  static constexpr std::pair<std::string_view, int> kNames[] = {
      {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ABRT", 6},   {"KILL", 9},   {"USR1", 10},
      {"SEGV", 11}, {"USR2", 12}, {"PIPE", 13}, {"ALRM", 14},  {"TERM", 15},  {"CONT", 18},
      {"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22},  {"URG", 23},   {"XCPU", 24},
      {"XFSZ", 25}, {"VTALRM", 26}, {"PROF", 27}, {"WINCH", 28}};
  const Status bad = InvalidArgument(
      "is not a signal specification ([{R|B}:]SIGNAL[@SECONDS], e.g. B:USR1@90)");
  WarnSignal out;
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    std::string_view flags = text.substr(0, colon);
    if (flags.empty() || flags.find_first_not_of("RBrb") != std::string_view::npos) return bad;
    out.batch_only = flags.find_first_of("Bb") != std::string_view::npos;
    text.remove_prefix(colon + 1);  // R: (reservations) has nothing to act on here
  }
  const std::size_t at = text.find('@');
  std::string_view sig = text.substr(0, at);
  if (at != std::string_view::npos) {
    std::optional<std::uint64_t> t = ParseUnsigned(text.substr(at + 1), 65535);  // Slurm's max
    if (!t) return bad;
    out.time = static_cast<Seconds>(*t);
  }
  if (sig.size() > 3 && (sig.substr(0, 3) == "SIG" || sig.substr(0, 3) == "sig")) sig.remove_prefix(3);
  for (const auto& [name, number] : kNames) {
    if (sig.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < sig.size(); ++i)
      same &= std::toupper(static_cast<unsigned char>(sig[i])) == name[i];
    if (same) out.number = number;
  }
  if (out.number == 0) {
    std::optional<std::uint64_t> n = ParseUnsigned(sig, 64);
    if (!n || *n == 0) return bad;
    out.number = static_cast<std::int32_t>(*n);
  }
  return out;
}

Result<std::int32_t> ParseNice(std::string_view text) {
  constexpr std::int64_t kMaxNice = 2147483645;  // Slurm's NICE_OFFSET - 3
  const bool negative = !text.empty() && text[0] == '-';
  std::optional<std::uint64_t> v =
      ParseUnsigned(text.substr(negative || (!text.empty() && text[0] == '+') ? 1 : 0), kMaxNice);
  if (!v) return InvalidArgument(fmt::format("is not a nice value (-{0} to {0})", kMaxNice));
  return static_cast<std::int32_t>(negative ? -static_cast<std::int64_t>(*v) : *v);
}

}  // namespace lockstep::jobspec::sbatch_internal
