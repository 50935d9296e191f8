#include "backend/agent/task_usage.h"

#include <unistd.h>

#include <charconv>
#include <sstream>

#include "backend/agent/cgroup.h"

namespace lockstep::agent {
namespace {

std::optional<std::int64_t> Number(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

std::optional<std::string> Read(const std::string& path) {
  Result<std::string> r = internal::ReadSmallFile(path);
  if (!r.ok()) return std::nullopt;
  return *r;
}

// The value after `key` at the start of a line, skipping separators.
std::optional<std::int64_t> ValueOfLine(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.substr(0, key.size()) == key) {
      line.remove_prefix(key.size());
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      return Number(line);
    }
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcessUsage> ParseProcStat(std::string_view text) {
  const std::size_t paren = text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  // Fields after comm, from field 3 (state) on: split on spaces.
  std::vector<std::string_view> f;
  std::size_t at = paren + 1;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    if (end > at) f.push_back(text.substr(at, end - at));
    at = end;
  }
  // f[0] is field 3 (state): field N is f[N - 3].
  auto field = [&](int n) {
    return n - 3 < static_cast<int>(f.size()) ? Number(f[n - 3]) : std::nullopt;
  };
  auto majflt = field(12), cmajflt = field(13), utime = field(14), stime = field(15),
       cutime = field(16), cstime = field(17), vsize = field(23), rss = field(24);
  if (!majflt || !cmajflt || !utime || !stime || !cutime || !cstime || !vsize || !rss)
    return std::nullopt;
  return ProcessUsage{*utime + *stime, *cutime + *cstime, *majflt + *cmajflt, *vsize, *rss};
}

std::optional<std::int64_t> ParseStatusKb(std::string_view text, std::string_view key) {
  const std::string k = std::string(key) + ":";
  std::optional<std::int64_t> kb = ValueOfLine(text, k);
  if (!kb) return std::nullopt;
  return *kb * 1024;
}

std::optional<std::int64_t> ParseColonValue(std::string_view text, std::string_view key) {
  return ValueOfLine(text, std::string(key) + ":");
}

IoBytes ParseIoStat(std::string_view text) {
  IoBytes io;
  std::istringstream in{std::string(text)};
  std::string word;
  while (in >> word) {
    if (word.rfind("rbytes=", 0) == 0)
      io.read += Number(std::string_view(word).substr(7)).value_or(0);
    if (word.rfind("wbytes=", 0) == 0)
      io.write += Number(std::string_view(word).substr(7)).value_or(0);
  }
  return io;
}

TaskUsageSample ReadTaskUsage(const std::vector<pid_t>& pids, const std::string& cgroup_dir) {
  TaskUsageSample s;
  const long ticks = ::sysconf(_SC_CLK_TCK) > 0 ? ::sysconf(_SC_CLK_TCK) : 100;
  const long page = ::sysconf(_SC_PAGESIZE) > 0 ? ::sysconf(_SC_PAGESIZE) : 4096;
  std::int64_t cpu_ticks = 0, hwm = 0;
  IoBytes proc_io;
  for (pid_t pid : pids) {
    const std::string dir = "/proc/" + std::to_string(pid);
    std::optional<std::string> stat = Read(dir + "/stat");
    std::optional<ProcessUsage> u = stat ? ParseProcStat(*stat) : std::nullopt;
    if (!u) continue;  // ended meanwhile
    s.pids.push_back(pid);
    cpu_ticks += u->cpu_ticks + u->child_ticks;
    s.pages += u->major_faults;
    s.vm_bytes += u->vm_bytes;
    s.rss_bytes += u->rss_pages * page;
    if (std::optional<std::string> status = Read(dir + "/status"))
      hwm += ParseStatusKb(*status, "VmHWM").value_or(0);
    if (std::optional<std::string> io = Read(dir + "/io")) {
      proc_io.read += ParseColonValue(*io, "read_bytes").value_or(0);
      proc_io.write += ParseColonValue(*io, "write_bytes").value_or(0);
    }
  }
  s.cpu_usec = cpu_ticks * 1000000 / ticks;
  s.max_rss_bytes = std::max(hwm, s.rss_bytes);
  s.read_bytes = proc_io.read;
  s.write_bytes = proc_io.write;
  if (cgroup_dir.empty()) return s;
  // The cgroup's own accounting, where it has it: it also counts processes that ended.
  if (std::optional<std::string> cpu = Read(cgroup_dir + "/cpu.stat"))
    if (auto usec = ParseKeyedValue(*cpu, "usage_usec")) s.cpu_usec = std::max(s.cpu_usec, *usec);
  if (std::optional<std::string> cur = Read(cgroup_dir + "/memory.current"))
    if (auto bytes = Number(*cur)) s.rss_bytes = *bytes;
  if (std::optional<std::string> peak = Read(cgroup_dir + "/memory.peak"))
    if (auto bytes = Number(*peak)) s.max_rss_bytes = std::max(*bytes, s.rss_bytes);
  if (std::optional<std::string> io = Read(cgroup_dir + "/io.stat")) {
    IoBytes b = ParseIoStat(*io);
    s.read_bytes = std::max(s.read_bytes, b.read);
    s.write_bytes = std::max(s.write_bytes, b.write);
  }
  return s;
}

}  // namespace lockstep::agent
