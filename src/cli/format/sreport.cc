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
  auto value = [](const ClusterUsage& u, Col c) -> std::int64_t {
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
  };
  for (Field& f : *fields) {
    if (!f.usage) continue;
    std::int64_t most = 0;
    for (const ClusterUsage& u : rows) most = std::max(most, value(u, f.col));
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
    for (std::size_t i = 0; i < fields->size(); ++i) {
      const Field& f = (*fields)[i];
      std::string text;
      if (f.col == Col::kCluster)
        text = o.cluster;
      else if (f.col == Col::kTresName)
        text = u.tres;
      else if (f.col == Col::kTresCount)
        text = std::to_string(u.count);
      else if (f.col == Col::kEnergy)
        text = UsageText(0, 0, o.time);
      else if (f.col == Col::kReported)
        text = UsageText(u.reported, u.reported, o.time);
      else
        text = UsageText(value(u, f.col), u.reported, o.time);
      out.Cell(f, text, i + 1 == fields->size());
    }
    out.End();
  }
  return std::move(out.text());
}

namespace {

struct UserRow {
  std::string login;
  std::set<std::string> accounts;
  std::map<std::string, std::int64_t> used;  // by TRES
};

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
  std::map<std::string, std::int64_t> cluster_total;  // the share's whole: what the cluster had
  const Time until = std::max(o.window.start, std::min(o.window.end, o.now));
  for (const std::string& tres : tres_list)
    for (const nlohmann::json& n : nodes)
      cluster_total[tres] += *TresOfNode(tres, n) * (until - o.window.start);
  std::map<std::pair<std::string, std::string>, UserRow> by_key;
  for (const nlohmann::json& j : jobs) {
    const std::string user = SreportStr(j, "user"), account = SreportStr(j, "account");
    if ((!o.users.empty() && !o.users.count(user)) ||
        (!o.accounts.empty() && !o.accounts.count(account)))
      continue;
    UserRow& row = by_key[{user, o.group_accounts ? "" : account}];
    row.login = user;
    row.accounts.insert(account);
    row.used["cpu"] += JobTresSeconds(j, *TresOfJob("cpu", j), o);  // the order of the lines
    for (const std::string& tres : tres_list)
      if (tres != "cpu") row.used[tres] += JobTresSeconds(j, *TresOfJob(tres, j), o);
  }
  // Users without usage in the window have no line (slurmdbd has no usage rows for them).
  std::vector<UserRow> rows;
  for (auto& [key, row] : by_key)
    if (row.used["cpu"] > 0) rows.push_back(std::move(row));
  // sort_user_dec: most CPU time first, then by name.
  std::stable_sort(rows.begin(), rows.end(), [](const UserRow& a, const UserRow& b) {
    if (a.used.at("cpu") != b.used.at("cpu")) return a.used.at("cpu") > b.used.at("cpu");
    return a.login < b.login;
  });
  if (o.top_count >= 0 && rows.size() > static_cast<std::size_t>(o.top_count))
    rows.resize(static_cast<std::size_t>(o.top_count));
  // Used as wide as the first (largest) line's usage; Energy as its energy (none here).
  const bool has_energy = std::any_of(fields->begin(), fields->end(),
                                      [](const Field& f) { return f.col == Col::kEnergy; });
  std::int64_t most = 0;
  if (!rows.empty())
    for (const std::string& tres : has_energy ? std::vector<std::string>{"cpu"} : tres_list)
      most = std::max(most, rows.front().used[tres]);
  for (Field& f : *fields)
    if (f.col == Col::kUsed)
      f.len = UsageWidth(most, o.time);
    else if (f.col == Col::kEnergy)
      f.len = UsageWidth(0, o.time);

  Lines out(o.parsable);
  if (!o.noheader) {
    out.text() += kRule;
    out.text() += "Top " + std::to_string(o.top_count) + " Users " + TimeStamp(o.window.start) +
                  " - " + TimeStamp(o.window.end - 1) + " (" +
                  std::to_string(o.window.end - o.window.start) + " secs)\n" + UsageLine(o) + kRule;
    out.Header(*fields);
  }
  for (UserRow& row : rows) {
    for (const std::string& tres : tres_list) {
      for (std::size_t i = 0; i < fields->size(); ++i) {
        const Field& f = (*fields)[i];
        std::string text;
        if (f.col == Col::kCluster)
          text = o.cluster;
        else if (f.col == Col::kLogin)
          text = row.login;
        else if (f.col == Col::kProper)
          text = o.proper_name ? o.proper_name(row.login) : "";
        else if (f.col == Col::kAccount) {
          for (const std::string& a : row.accounts) text += (text.empty() ? "" : ", ") + a;
        } else if (f.col == Col::kTresName)
          text = tres;
        else if (f.col == Col::kUsed)
          text = UsageText(row.used[tres], cluster_total[tres], o.time);
        else if (f.col == Col::kEnergy)
          text = UsageText(0, 0, o.time);
        out.Cell(f, text, i + 1 == fields->size());
      }
      out.End();
    }
  }
  return std::move(out.text());
}

}  // namespace lockstep::cli
