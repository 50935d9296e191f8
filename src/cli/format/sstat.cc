#include "cli/format/sstat.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include "cli/format/field_format.h"

namespace lockstep::cli {
namespace {

// The aggregate of a step's task samples that the fields read.
struct Stats {
  std::string job_id;  // "42.batch", "42.0"
  std::string nodes;
  std::vector<std::string> pids;
  std::int64_t ntasks = 0;
  struct Extreme {
    std::int64_t value = 0;
    std::string node;
    std::int64_t task = 0;
  };
  Extreme max_vm, max_rss, max_pages, min_cpu, max_read, max_write;
  double ave_vm = 0, ave_rss = 0, ave_pages = 0, ave_cpu = 0, ave_read = 0, ave_write = 0;
  std::int64_t tot_cpu = 0, tot_read = 0, tot_write = 0;
};

struct Field {
  const char* name;
  int width;  // as in Slurm's table: negative is left-justified
  std::function<std::string(const Stats&, bool noconvert)> value;
};

// Slurm's convert_num_unit2, approximate (sstat's default): scaled by 1024 while it can be,
// "2140K", "3.50M"; --noconvert prints the number as it is.
std::string Size(double bytes, bool noconvert) {
  if (static_cast<std::int64_t>(bytes) == 0) return "0";
  static const char kUnits[] = "\0KMGTP";
  int unit = 0;
  if (!noconvert)
    while (bytes >= 1024 && unit < 5) bytes /= 1024, ++unit;
  const auto whole = static_cast<std::int64_t>(bytes);
  std::string s =
      static_cast<double>(whole) == bytes ? std::to_string(whole) : fmt::format("{:.2f}", bytes);
  if (unit > 0) s += kUnits[unit];
  return s;
}

// sstat's _elapsed_time for CPU times: "1-02:03:04", "02:03:04", "03:04.567", "00:03:04".
std::string CpuTime(double usec) {
  const auto total_ms = static_cast<std::int64_t>(usec / 1000);
  const std::int64_t secs = total_ms / 1000, ms = total_ms % 1000;
  const std::int64_t days = secs / 86400, hours = secs / 3600 % 24, minutes = secs / 60 % 60,
                     seconds = secs % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  if (hours > 0) return fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds);
  if (ms > 0) return fmt::format("{:02}:{:02}.{:03}", minutes, seconds, ms);
  return fmt::format("00:{:02}:{:02}", minutes, seconds);
}

// TRES strings as Slurm prints them: "cpu=00:00:01,energy=0,fs/disk=0,mem=2140K,pages=0,vmem=...".
std::string TresIn(std::int64_t cpu_usec, double mem, std::int64_t pages, double vm, double disk,
                   bool noconvert) {
  return fmt::format("cpu={},energy=0,fs/disk={},mem={},pages={},vmem={}", CpuTime(cpu_usec),
                     Size(disk, noconvert), Size(mem, noconvert), pages, Size(vm, noconvert));
}

std::string Task(std::int64_t t) {
  return std::to_string(t);
}

const std::vector<Field>& Fields() {
  using S = const Stats&;
  static const std::vector<Field> kFields = {
      {"AveCPU", 10, [](S s, bool) { return CpuTime(s.ave_cpu); }},
      {"AveCPUFreq", 10, [](S, bool) { return std::string("0"); }},
      {"AveDiskRead", 12, [](S s, bool n) { return Size(s.ave_read, n); }},
      {"AveDiskWrite", 12, [](S s, bool n) { return Size(s.ave_write, n); }},
      {"AvePages", 10, [](S s, bool n) { return Size(s.ave_pages, n); }},
      {"AveRSS", 10, [](S s, bool n) { return Size(s.ave_rss, n); }},
      {"AveVMSize", 10, [](S s, bool n) { return Size(s.ave_vm, n); }},
      {"ConsumedEnergy", 14, [](S, bool) { return std::string("0"); }},
      {"ConsumedEnergyRaw", 17, [](S, bool) { return std::string("0"); }},
      {"JobID", -12, [](S s, bool) { return s.job_id; }},
      {"MaxDiskRead", 12, [](S s, bool n) { return Size(s.max_read.value, n); }},
      {"MaxDiskReadNode", 15, [](S s, bool) { return s.max_read.node; }},
      {"MaxDiskReadTask", 15, [](S s, bool) { return Task(s.max_read.task); }},
      {"MaxDiskWrite", 12, [](S s, bool n) { return Size(s.max_write.value, n); }},
      {"MaxDiskWriteNode", 16, [](S s, bool) { return s.max_write.node; }},
      {"MaxDiskWriteTask", 16, [](S s, bool) { return Task(s.max_write.task); }},
      {"MaxPages", 8, [](S s, bool n) { return Size(s.max_pages.value, n); }},
      {"MaxPagesNode", 12, [](S s, bool) { return s.max_pages.node; }},
      {"MaxPagesTask", 14, [](S s, bool) { return Task(s.max_pages.task); }},
      {"MaxRSS", 10, [](S s, bool n) { return Size(s.max_rss.value, n); }},
      {"MaxRSSNode", 10, [](S s, bool) { return s.max_rss.node; }},
      {"MaxRSSTask", 10, [](S s, bool) { return Task(s.max_rss.task); }},
      {"MaxVMSize", 10, [](S s, bool n) { return Size(s.max_vm.value, n); }},
      {"MaxVMSizeNode", 14, [](S s, bool) { return s.max_vm.node; }},
      {"MaxVMSizeTask", 14, [](S s, bool) { return Task(s.max_vm.task); }},
      {"MinCPU", 10, [](S s, bool) { return CpuTime(s.min_cpu.value); }},
      {"MinCPUNode", 10, [](S s, bool) { return s.min_cpu.node; }},
      {"MinCPUTask", 10, [](S s, bool) { return Task(s.min_cpu.task); }},
      {"Nodelist", 20, [](S s, bool) { return s.nodes; }},
      {"NTasks", 8, [](S s, bool) { return std::to_string(s.ntasks); }},
      {"Pids", 20,
       [](S s, bool) {
         std::string out;
         for (const std::string& p : s.pids) out += (out.empty() ? "" : ",") + p;
         return out;
       }},
      {"ReqCPUFreq", 10, [](S, bool) { return std::string("Unknown"); }},
      {"ReqCPUFreqMin", 13, [](S, bool) { return std::string("Unknown"); }},
      {"ReqCPUFreqMax", 13, [](S, bool) { return std::string("Unknown"); }},
      {"ReqCPUFreqGov", 13, [](S, bool) { return std::string("Unknown"); }},
      {"TRESUsageInAve", 14,
       [](S s, bool n) {
         return TresIn(static_cast<std::int64_t>(s.ave_cpu), s.ave_rss,
                       static_cast<std::int64_t>(s.ave_pages), s.ave_vm, s.ave_read, n);
       }},
      {"TRESUsageInMax", 14,
       [](S s, bool n) {
         return TresIn(s.tot_cpu, s.max_rss.value, s.max_pages.value, s.max_vm.value,
                       s.max_read.value, n);
       }},
      {"TRESUsageInMaxNode", 18,
       [](S s, bool) {
         return fmt::format("cpu={},fs/disk={},mem={},pages={},vmem={}", s.min_cpu.node,
                            s.max_read.node, s.max_rss.node, s.max_pages.node, s.max_vm.node);
       }},
      {"TRESUsageInMaxTask", 18,
       [](S s, bool) {
         return fmt::format("cpu={},fs/disk={},mem={},pages={},vmem={}", s.min_cpu.task,
                            s.max_read.task, s.max_rss.task, s.max_pages.task, s.max_vm.task);
       }},
      {"TRESUsageInMin", 14,
       [](S s, bool n) {
         return TresIn(s.min_cpu.value, s.max_rss.value, s.max_pages.value, s.max_vm.value,
                       s.max_read.value, n);
       }},
      {"TRESUsageInMinNode", 18, [](S s, bool) { return "cpu=" + s.min_cpu.node; }},
      {"TRESUsageInMinTask", 18, [](S s, bool) { return "cpu=" + Task(s.min_cpu.task); }},
      {"TRESUsageInTot", 14,
       [](S s, bool n) {
         return TresIn(s.tot_cpu, s.ave_rss * static_cast<double>(s.ntasks),
                       static_cast<std::int64_t>(s.ave_pages * static_cast<double>(s.ntasks)),
                       s.ave_vm * static_cast<double>(s.ntasks), static_cast<double>(s.tot_read),
                       n);
       }},
      {"TRESUsageOutAve", 15,
       [](S s, bool n) { return "energy=0,fs/disk=" + Size(s.ave_write, n); }},
      {"TRESUsageOutMax", 15,
       [](S s, bool n) { return "energy=0,fs/disk=" + Size(s.max_write.value, n); }},
      {"TRESUsageOutMaxNode", 19, [](S s, bool) { return "fs/disk=" + s.max_write.node; }},
      {"TRESUsageOutMaxTask", 19, [](S s, bool) { return "fs/disk=" + Task(s.max_write.task); }},
      {"TRESUsageOutMin", 15,
       [](S s, bool n) { return "energy=0,fs/disk=" + Size(s.max_write.value, n); }},
      {"TRESUsageOutMinNode", 19, [](S s, bool) { return "fs/disk=" + s.max_write.node; }},
      {"TRESUsageOutMinTask", 19, [](S s, bool) { return "fs/disk=" + Task(s.max_write.task); }},
      {"TRESUsageOutTot", 15,
       [](S s, bool n) { return "energy=0,fs/disk=" + Size(static_cast<double>(s.tot_write), n); }},
  };
  return kFields;
}

struct Column {
  const Field* field;
  int width;
};

bool PrefixIgnoringCase(std::string_view prefix, std::string_view name) {
  if (prefix.empty() || prefix.size() > name.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(prefix[i])) !=
        std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

// "jobid,maxrss%20": each name a prefix of a field (the first in Slurm's order), as sstat's
// options.c takes them.
Result<std::vector<Column>> Columns(const SstatOptions& o) {
  const std::string format = o.format.empty() ? kSstatDefaultFields : o.format;
  std::vector<Column> out;
  std::size_t start = 0;
  while (start <= format.size()) {
    std::size_t comma = format.find(',', start);
    std::string token =
        format.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? format.size() + 1 : comma + 1;
    std::size_t percent = token.find('%');
    std::string name = token.substr(0, percent);
    if (name.empty()) continue;
    const Field* field = nullptr;
    for (const Field& f : Fields())  // the first in the table's order, as Slurm takes it
      if (field == nullptr && PrefixIgnoringCase(name, f.name)) field = &f;
    if (field == nullptr)
      return InvalidArgument(fmt::format("Invalid field requested: \"{}\"", name));
    Column c{field, field->width};
    if (percent != std::string::npos) {
      int width = 0;
      std::string digits = token.substr(percent + 1);
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), width);
      if (ec != std::errc() || end != digits.data() + digits.size() || std::abs(width) > 10000)
        return InvalidArgument(fmt::format("bad field width in \"{}\"", token));
      if (width != 0) c.width = width;
    }
    out.push_back(c);
  }
  if (out.empty()) return InvalidArgument("no fields requested");
  return out;
}

std::string Cell(const Column& c, std::string text) {
  const int width = std::abs(c.width);
  if (static_cast<int>(text.size()) > width) {
    text.resize(static_cast<std::size_t>(width));
    if (width > 0) text.back() = '+';
  }
  return FitField(text, width, c.width > 0, true) + " ";
}

std::string Line(const std::vector<Column>& columns, const std::vector<std::string>& values,
                 int parsable) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (parsable == 0) {
      out += Cell(columns[i], values[i]);
    } else {
      out += values[i];
      if (i + 1 < columns.size() || parsable == 1) out += "|";
    }
  }
  return out + "\n";
}

Result<Stats> Aggregate(std::int64_t job_id, const nlohmann::json& step) {
  Stats s;
  const nlohmann::json id = step.value("step_id", nlohmann::json());
  s.job_id = std::to_string(job_id) + "." +
             (id.is_string() ? EscapeControl(id.get<std::string>()) : id.dump());
  s.nodes = JStr(step, "nodes");
  const nlohmann::json tasks = step.value("tasks", nlohmann::json::array());
  if (!tasks.is_array() || tasks.empty())
    return FailedPrecondition("no usage data for " + s.job_id);
  bool first = true;
  for (const nlohmann::json& t : tasks) {
    const std::string node = JStr(t, "node");
    const std::int64_t rank = JIntOr(t, "rank", 0);
    auto take_max = [&](Stats::Extreme& e, std::int64_t v) {
      if (first || v > e.value) e = {v, node, rank};
    };
    const std::int64_t cpu = JIntOr(t, "cpu_usec", 0);
    take_max(s.max_vm, JIntOr(t, "max_vm_bytes", JIntOr(t, "vm_bytes", 0)));
    take_max(s.max_rss, JIntOr(t, "max_rss_bytes", JIntOr(t, "rss_bytes", 0)));
    take_max(s.max_pages, JIntOr(t, "pages", 0));
    take_max(s.max_read, JIntOr(t, "read_bytes", 0));
    take_max(s.max_write, JIntOr(t, "write_bytes", 0));
    if (first || cpu < s.min_cpu.value) s.min_cpu = {cpu, node, rank};
    s.ave_vm += static_cast<double>(JIntOr(t, "vm_bytes", 0));
    s.ave_rss += static_cast<double>(JIntOr(t, "rss_bytes", 0));
    s.ave_pages += static_cast<double>(JIntOr(t, "pages", 0));
    s.ave_cpu += static_cast<double>(cpu);
    s.ave_read += static_cast<double>(JIntOr(t, "read_bytes", 0));
    s.ave_write += static_cast<double>(JIntOr(t, "write_bytes", 0));
    s.tot_cpu += cpu;
    s.tot_read += JIntOr(t, "read_bytes", 0);
    s.tot_write += JIntOr(t, "write_bytes", 0);
    if (t.contains("pids") && t["pids"].is_array())
      for (const nlohmann::json& p : t["pids"])
        if (p.is_number_integer()) s.pids.push_back(std::to_string(p.get<std::int64_t>()));
    ++s.ntasks;
    first = false;
  }
  const double n = static_cast<double>(s.ntasks);
  for (double* ave : {&s.ave_vm, &s.ave_rss, &s.ave_pages, &s.ave_cpu, &s.ave_read, &s.ave_write})
    *ave /= n;
  return s;
}

}  // namespace

Result<std::string> FormatSstatHeader(const SstatOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(columns, Columns(options));
  if (options.noheader) return std::string();
  std::vector<std::string> names, dashes;
  for (const Column& c : columns) {
    names.push_back(c.field->name);
    dashes.push_back(std::string(static_cast<std::size_t>(std::abs(c.width)), '-'));
  }
  std::string out = Line(columns, names, options.parsable);
  if (options.parsable == 0) {
    std::string line;
    for (std::size_t i = 0; i < columns.size(); ++i)
      line += FitField(dashes[i], std::abs(columns[i].width), false, true) + " ";
    out += line + "\n";
  }
  return out;
}

Result<std::string> FormatSstatStep(std::int64_t job_id, const nlohmann::json& step,
                                    const SstatOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(columns, Columns(options));
  LOCKSTEP_ASSIGN_OR_RETURN(stats, Aggregate(job_id, step));
  std::vector<std::string> values;
  for (const Column& c : columns) values.push_back(c.field->value(stats, options.noconvert));
  return Line(columns, values, options.parsable);
}

std::string SstatFieldNames() {
  std::string out;
  int i = 0;
  for (const Field& f : Fields()) {
    out += fmt::format("{:<20}", f.name);
    if (++i % 4 == 0) {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += "\n";
    }
  }
  if (i % 4 != 0) {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

}  // namespace lockstep::cli
