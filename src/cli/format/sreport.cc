// sreport's reports as Slurm 22.05 prints them: the header block, print_fields' columns (widths,
// right-justified, '+' on a cut string, -p/-P), usage columns as wide as their largest value.
#include "cli/format/sreport.h"

#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "cli/format/field_format.h"
#include "cli/format/sreport_internal.h"

namespace lockstep::cli {
namespace {

enum class Col {
  kCluster,
  kTresCount,
  kAlloc,
  kDown,
  kIdle,
  kPlannedDown,
  kOver,
  kPlanned,
  kReported,
  kTresName,
  kEnergy,
  kLogin,
  kProper,
  kAccount,
  kUsed
};

struct Field {
  Col col;
  std::string name;
  int len;
  bool usage;  // a usage value: printed by sreport's time rules, its width set by its values
};

const char kRule[] =
    "--------------------------------------------------------------------------------\n";

bool Typed(const std::string& typed, const char* name, std::size_t least) {
  return ::strncasecmp(name, typed.c_str(), std::max(typed.size(), least)) == 0;
}

bool PerFormat(SreportTime t) {
  return t == SreportTime::kSecPer || t == SreportTime::kMinPer || t == SreportTime::kHourPer;
}

// "Used%12" -> ("Used", 12).
std::pair<std::string, int> SplitWidth(const std::string& typed) {
  std::size_t pct = typed.find('%');
  if (pct == std::string::npos) return {typed, 0};
  return {typed.substr(0, pct), std::atoi(typed.c_str() + pct + 1)};
}

// cluster_reports.c's _setup_print_fields_list, in its order of tests.
std::optional<Field> ClusterField(const std::string& w) {
  if (Typed(w, "allocated", 2)) return Field{Col::kAlloc, "Allocated", 12, true};
  if (Typed(w, "Cluster", 2)) return Field{Col::kCluster, "Cluster", 9, false};
  if (Typed(w, "down", 1)) return Field{Col::kDown, "Down", 10, true};
  if (Typed(w, "idle", 1)) return Field{Col::kIdle, "Idle", 12, true};
  if (Typed(w, "overcommitted", 1)) return Field{Col::kOver, "Over Comm", 9, true};
  if (Typed(w, "planned", 2) || Typed(w, "reserved", 3))
    return Field{Col::kPlanned, "Planned", 9, true};
  if (Typed(w, "PlannedDown", 2) || Typed(w, "PLNDDown", 2))
    return Field{Col::kPlannedDown, "PLND Down", 10, true};
  if (Typed(w, "reported", 3)) return Field{Col::kReported, "Reported", 12, true};
  if (Typed(w, "TresCount", 5) || Typed(w, "cpucount", 2) || Typed(w, "count", 2))
    return Field{Col::kTresCount, "TRES Count", 10, false};
  if (Typed(w, "TresName", 5)) return Field{Col::kTresName, "TRES Name", 14, false};
  if (Typed(w, "Energy", 1)) return Field{Col::kEnergy, "Energy", 10, true};
  return std::nullopt;
}

// user_reports.c's _setup_print_fields_list.
std::optional<Field> UserField(const std::string& w) {
  if (Typed(w, "Accounts", 1)) return Field{Col::kAccount, "Account", 15, false};
  if (Typed(w, "Cluster", 1)) return Field{Col::kCluster, "Cluster", 9, false};
  if (Typed(w, "Energy", 1)) return Field{Col::kEnergy, "Energy", 10, true};
  if (Typed(w, "Login", 1)) return Field{Col::kLogin, "Login", 9, false};
  if (Typed(w, "Proper", 1)) return Field{Col::kProper, "Proper Name", 15, false};
  if (Typed(w, "TresName", 5)) return Field{Col::kTresName, "TRES Name", 14, false};
  if (Typed(w, "Used", 1)) return Field{Col::kUsed, "Used", 10, true};
  return std::nullopt;
}

Result<std::vector<Field>> Fields(const std::vector<std::string>& typed,
                                  std::optional<Field> (*lookup)(const std::string&)) {
  std::vector<Field> out;
  for (const std::string& t : typed) {
    auto [word, width] = SplitWidth(t);
    std::optional<Field> f = lookup(word);
    if (!f) return InvalidArgument("Unknown field '" + word + "'");
    if (width) f->len = width;
    out.push_back(*f);
  }
  return out;
}

// common.c's sreport_set_usage_col_width: 8 columns up to 99,999,999, one more per digit.
int UsageWidth(std::int64_t seconds, SreportTime t) {
  int len = 8;
  for (std::int64_t order = 100000000; seconds >= order && len < 26; order *= 10) ++len;
  return PerFormat(t) ? len + 9 : len;
}

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// sreport_get_time_str: a usage in the -t unit, or as a share of `total`.
std::string UsageText(std::int64_t value, std::int64_t total, SreportTime t) {
  const double percent =
      100.0 * static_cast<double>(value) / static_cast<double>(total ? total : 1);
  const double v = static_cast<double>(value);
  switch (t) {
    case SreportTime::kSeconds:
      return std::to_string(value);
    case SreportTime::kHours:
      return Printf("%.0f", v / 3600);
    case SreportTime::kPercent:
      return Printf("%.2f%%", percent);
    case SreportTime::kSecPer:
      return std::to_string(value) + Printf("(%.2f%%)", percent);
    case SreportTime::kMinPer:
      return Printf("%.0f", v / 60) + Printf("(%.2f%%)", percent);
    case SreportTime::kHourPer:
      return Printf("%.0f", v / 3600) + Printf("(%.2f%%)", percent);
    case SreportTime::kMinutes:
      break;
  }
  return Printf("%.0f", v / 60);
}

std::string TimeUnitName(SreportTime t) {
  switch (t) {
    case SreportTime::kSeconds:
      return "Seconds";
    case SreportTime::kHours:
      return "Hours";
    case SreportTime::kPercent:
      return "Percentage of Total";
    case SreportTime::kSecPer:
      return "Seconds/Percentage of Total";
    case SreportTime::kMinPer:
      return "Minutes/Percentage of Total";
    case SreportTime::kHourPer:
      return "Hours/Percentage of Total";
    case SreportTime::kMinutes:
      break;
  }
  return "Minutes";
}

// print_fields: one line of cells.
class Lines {
 public:
  explicit Lines(int parsable) : parsable_(parsable) {}

  // print_fields_str (cut with '+') or, for usage, slurmdb_report_print_time (cut silently).
  void Cell(const Field& f, const std::string& value, bool last) {
    if (parsable_ == 2 && last) {
      out_ += value;
    } else if (parsable_) {
      out_ += value + "|";
    } else {
      const int width = std::abs(f.len);
      std::string v = value;
      if (!f.usage && static_cast<int>(v.size()) > width && width > 0) {
        v.resize(static_cast<std::size_t>(width));
        v.back() = '+';
      }
      if (static_cast<int>(v.size()) > width) v.resize(static_cast<std::size_t>(width));
      std::string pad(static_cast<std::size_t>(width) - v.size(), ' ');
      out_ += (f.len >= 0 ? pad + v : v + pad) + " ";
    }
  }
  void End() { out_ += "\n"; }

  // print_fields_header: names, then a dashed rule under each (not when parsable).
  void Header(const std::vector<Field>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i)
      Cell(Field{fields[i].col, "", fields[i].len, true}, fields[i].name, i + 1 == fields.size());
    End();
    if (parsable_) return;
    for (const Field& f : fields)
      out_ += std::string(static_cast<std::size_t>(std::abs(f.len)), '-') + " ";
    End();
  }
  std::string& text() { return out_; }

 private:
  int parsable_;
  std::string out_;
};

std::string UsageLine(const SreportOptions& o) {
  bool cpu_only = o.tres.empty() || (o.tres.size() == 1 && o.tres[0] == "cpu");
  if (o.time == SreportTime::kPercent) return "Usage reported in " + TimeUnitName(o.time) + "\n";
  return std::string("Usage reported in ") + (cpu_only ? "CPU " : "TRES ") + TimeUnitName(o.time) +
         "\n";
}

std::vector<std::string> TresList(const SreportOptions& o) {
  return o.tres.empty() ? std::vector<std::string>{"cpu"} : o.tres;
}

Status CheckTres(const std::vector<std::string>& tres_list) {
  for (const std::string& tres : tres_list)
    if (Result<std::int64_t> c = TresOfNode(tres, nlohmann::json::object()); !c.ok())
      return c.status();
  return Status::Ok();
}

// A usage column's TRES-seconds.
std::int64_t ClusterValue(const ClusterUsage& u, Col c) {
  switch (c) {
    case Col::kAlloc:
      return u.alloc;
    case Col::kDown:
      return u.down;
    case Col::kIdle:
      return u.idle;
    case Col::kPlannedDown:
      return u.planned_down;
    case Col::kPlanned:
      return u.planned;
    case Col::kReported:
      return u.reported;
    case Col::kEnergy:
      return u.alloc;  // as Slurm, which sizes Energy by allocated time
    default:
      return 0;
  }
}

// One cell of a cluster utilization line: shares are of what was reported.
std::string ClusterCell(const Field& f, const ClusterUsage& u, const SreportOptions& o) {
  switch (f.col) {
    case Col::kCluster:
      return o.cluster;
    case Col::kTresName:
      return u.tres;
    case Col::kTresCount:
      return std::to_string(u.count);
    case Col::kEnergy:
      return UsageText(0, 0, o.time);
    default:
      return UsageText(ClusterValue(u, f.col), u.reported, o.time);
  }
}

}  // namespace

Result<std::string> FormatClusterUtilization(const nlohmann::json& jobs,
                                             const nlohmann::json& nodes,
                                             const nlohmann::json& events,
                                             const SreportOptions& o) {
  if (!jobs.is_array() || !nodes.is_array() || !events.is_array())
    return InvalidArgument("sreport: jobs, nodes and events must be lists");
  std::vector<std::string> typed = o.format;
  if (typed.empty())
    typed = o.tres.empty()
                ? std::vector<std::string>{"Cluster", "Allocated", "Down",    "PLNDDown",
                                           "Idle",    "Planned",   "Reported"}
                : std::vector<std::string>{"Cluster",  "TresName", "Allocated", "Down",
                                           "PLNDDown", "Idle",     "Planned",   "Reported"};
  Result<std::vector<Field>> fields = Fields(typed, ClusterField);
  if (!fields.ok()) return fields.status();
  if (Status st = CheckTres(TresList(o)); !st.ok()) return st;
  std::vector<ClusterUsage> rows;
  for (const std::string& tres : TresList(o))
    rows.push_back(ComputeClusterUsage(tres, jobs, nodes, events, o));
  // Usage columns as wide as the largest value of any TRES (cluster_utilization()).
  for (Field& f : *fields) {
    if (!f.usage) continue;
    std::int64_t most = 0;
    for (const ClusterUsage& u : rows) most = std::max(most, ClusterValue(u, f.col));
    f.len = UsageWidth(most, o.time);
  }
  Lines out(o.parsable);
  if (!o.noheader) {
    out.text() += kRule;
    out.text() += "Cluster Utilization " + TimeStamp(o.window.start) + " - " +
                  TimeStamp(o.window.end - 1) + "\n" + UsageLine(o) + kRule;
    out.Header(*fields);
  }
  for (const ClusterUsage& u : rows) {
    for (std::size_t i = 0; i < fields->size(); ++i)
      out.Cell((*fields)[i], ClusterCell((*fields)[i], u, o), i + 1 == fields->size());
    out.End();
  }
  return std::move(out.text());
}

namespace {

// One cell of a user top line.
std::string UserCell(const Field& f, const UserUsage& row, const std::string& tres,
                     std::int64_t cluster_total, const SreportOptions& o) {
  switch (f.col) {
    case Col::kCluster:
      return o.cluster;
    case Col::kLogin:
      return row.login;
    case Col::kProper:
      return o.proper_name ? o.proper_name(row.login) : "";
    case Col::kTresName:
      return tres;
    case Col::kUsed:
      return UsageText(row.used.count(tres) ? row.used.at(tres) : 0, cluster_total, o.time);
    case Col::kEnergy:
      return UsageText(0, 0, o.time);
    case Col::kAccount: {
      std::string text;
      for (const std::string& a : row.accounts) text += (text.empty() ? "" : ", ") + a;
      return text;
    }
    default:
      return "";
  }
}

}  // namespace

Result<std::string> FormatUserTop(const nlohmann::json& jobs, const nlohmann::json& nodes,
                                  const SreportOptions& o) {
  if (!jobs.is_array() || !nodes.is_array())
    return InvalidArgument("sreport: jobs and nodes must be lists");
  std::vector<std::string> typed = o.format;
  if (typed.empty())
    typed = o.tres.empty() ? std::vector<std::string>{"Cl", "L", "P", "A", "U", "Energy"}
                           : std::vector<std::string>{"Cl", "L", "P", "A", "TresName", "Used"};
  Result<std::vector<Field>> fields = Fields(typed, UserField);
  if (!fields.ok()) return fields.status();
  const std::vector<std::string> tres_list = TresList(o);
  if (Status st = CheckTres(tres_list); !st.ok()) return st;
  const std::vector<UserUsage> rows = ComputeUserTop(jobs, tres_list, o);
  // Used as wide as the first (largest) line's usage; Energy as its energy (none here).
  const bool has_energy = std::any_of(fields->begin(), fields->end(),
                                      [](const Field& f) { return f.col == Col::kEnergy; });
  std::int64_t most = 0;
  if (!rows.empty())
    for (const auto& [tres, used] : rows.front().used)
      if (has_energy ? tres == "cpu"
                     : std::find(tres_list.begin(), tres_list.end(), tres) != tres_list.end())
        most = std::max(most, used);
  for (Field& f : *fields)
    if (f.col == Col::kUsed || f.col == Col::kEnergy)
      f.len = UsageWidth(f.col == Col::kUsed ? most : 0, o.time);

  Lines out(o.parsable);
  if (!o.noheader) {
    out.text() += kRule;
    out.text() += "Top " + std::to_string(o.top_count) + " Users " + TimeStamp(o.window.start) +
                  " - " + TimeStamp(o.window.end - 1) + " (" +
                  std::to_string(o.window.end - o.window.start) + " secs)\n" + UsageLine(o) + kRule;
    out.Header(*fields);
  }
  for (const UserUsage& row : rows) {
    for (const std::string& tres : tres_list) {
      const std::int64_t total = ClusterTresSeconds(tres, nodes, o);
      for (std::size_t i = 0; i < fields->size(); ++i)
        out.Cell((*fields)[i], UserCell((*fields)[i], row, tres, total, o),
                 i + 1 == fields->size());
      out.End();
    }
  }
  return std::move(out.text());
}

}  // namespace lockstep::cli
