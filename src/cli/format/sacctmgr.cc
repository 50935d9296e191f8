#include "cli/format/sacctmgr.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <set>

#include "common/duration.h"

namespace lockstep::cli {
namespace {

using Entity = SacctmgrList::Entity;
using Row = std::map<std::string, std::string>;  // field id -> value

struct Field {
  const char* id;      // what the user types (case-insensitive, a prefix is enough)
  const char* header;  // Slurm's column title
  int width;
};

// Slurm's fields (src/sacctmgr/common.c), in the order a prefix is resolved.
constexpr Field kFields[] = {
    {"Account", "Account", 10},        {"AdminLevel", "Admin", 9},
    {"Cluster", "Cluster", 10},        {"ControlHost", "ControlHost", 15},
    {"ControlPort", "ControlPort", 12}, {"DefaultAccount", "Def Acct", 10},
    {"DefaultQOS", "Def QOS", 9},      {"Description", "Descr", 20},
    {"Fairshare", "Share", 9},         {"Flags", "Flags", 20},
    {"GraceTime", "GraceTime", 10},    {"GrpJobs", "GrpJobs", 7},
    {"GrpSubmitJobs", "GrpSubmit", 9}, {"GrpTRESMins", "GrpTRESMins", 13},
    {"GrpTRESRunMins", "GrpTRESRunMin", 13}, {"GrpTRES", "GrpTRES", 13},
    {"GrpWall", "GrpWall", 11},        {"MaxJobs", "MaxJobs", 7},
    {"MaxJobsPerUser", "MaxJobsPU", 9}, {"MaxJobsPU", "MaxJobsPU", 9},
    {"MaxJobsPA", "MaxJobsPA", 9},      {"MaxJobsPerAccount", "MaxJobsPA", 9},
    {"MaxSubmitJobs", "MaxSubmit", 9}, {"MaxSubmitJobsPerUser", "MaxSubmitPU", 11},
    {"MaxSubmitPU", "MaxSubmitPU", 11}, {"MaxSubmitPA", "MaxSubmitPA", 11},
    {"MaxTRES", "MaxTRES", 13},        {"MaxTRESMins", "MaxTRESMins", 13},
    {"MaxTRESPerNode", "MaxTRESPerNode", 14}, {"MaxTRESPerUser", "MaxTRESPU", 13},
    {"MaxTRESPU", "MaxTRESPU", 13},    {"MaxTRESPA", "MaxTRESPA", 13},
    {"MaxWall", "MaxWall", 11},        {"MinTRES", "MinTRES", 13},
    {"Name", "Name", 10},              {"Organization", "Org", 20},
    {"ParentName", "Par Name", 10},    {"Partition", "Partition", 10},
    {"PreemptExemptTime", "PreemptExemptTime", 19}, {"PreemptMode", "PreemptMode", 11},
    {"Preempt", "Preempt", 10},        {"Priority", "Priority", 10},
    {"QOS", "QOS", 20},                {"RPC", "RPC", 5},
    {"Share", "Share", 9},             {"UsageFactor", "UsageFactor", 11},
    {"UsageThreshold", "UsageThres", 10}, {"User", "User", 10},
};

std::vector<std::string> Defaults(const SacctmgrList& l) {
  switch (l.entity) {
    case Entity::kAccount:
      if (!l.with_assoc) return {"Account", "Description", "Organization"};
      return {"Account", "Description", "Organization", "Cluster", "ParentName", "User",
              "Fairshare", "Priority", "GrpJobs", "GrpTRES", "GrpSubmitJobs", "GrpWall",
              "GrpTRESMins", "MaxJobs", "MaxTRES", "MaxTRESPerNode", "MaxSubmitJobs", "MaxWall",
              "MaxTRESMins", "QOS", "DefaultQOS"};
    case Entity::kUser:
      if (!l.with_assoc) return {"User", "DefaultAccount", "AdminLevel"};
      return {"User", "DefaultAccount", "AdminLevel", "Cluster", "Account", "Partition",
              "Fairshare", "Priority", "MaxJobs", "MaxTRES", "MaxSubmitJobs", "MaxWall", "QOS",
              "DefaultQOS"};
    case Entity::kAssociation:
      return {"Cluster", "Account", "User", "Partition", "Fairshare", "Priority", "GrpJobs",
              "GrpTRES", "GrpSubmitJobs", "GrpWall", "GrpTRESMins", "MaxJobs", "MaxTRES",
              "MaxTRESPerNode", "MaxSubmitJobs", "MaxWall", "MaxTRESMins", "QOS", "DefaultQOS",
              "GrpTRESRunMins"};
    case Entity::kQos:
      return {"Name",        "Priority",    "GraceTime",   "Preempt",        "PreemptExemptTime",
              "PreemptMode", "Flags%40",    "UsageThreshold", "UsageFactor", "GrpTRES",
              "GrpTRESMins", "GrpTRESRunMins", "GrpJobs",  "GrpSubmitJobs",  "GrpWall",
              "MaxTRES",     "MaxTRESPerNode", "MaxTRESMins", "MaxWall",     "MaxTRESPU",
              "MaxJobsPerUser", "MaxSubmitPU", "MaxTRESPA", "MaxJobsPA",     "MaxSubmitPA",
              "MinTRES"};
    case Entity::kCluster:
      return {"Cluster", "ControlHost", "ControlPort", "RPC", "Fairshare", "GrpJobs", "GrpTRES",
              "GrpSubmitJobs", "MaxJobs", "MaxTRES", "MaxSubmitJobs", "MaxWall", "QOS",
              "DefaultQOS"};
  }
  return {};
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Column {
  const Field* field;
  int width;  // negative: left-aligned
};

Result<Column> ResolveColumn(const std::string& spec) {
  std::string name = spec;
  int width = 0;
  bool has_width = false;
  if (std::size_t pct = spec.find('%'); pct != std::string::npos) {
    name = spec.substr(0, pct);
    char* end = nullptr;
    const std::string w = spec.substr(pct + 1);
    width = static_cast<int>(std::strtol(w.c_str(), &end, 10));
    if (w.empty() || *end != '\0') return InvalidArgument("Unknown field '" + spec + "'");
    has_width = true;
  }
  const std::string want = Lower(name);
  if (want.empty()) return InvalidArgument("Unknown field '" + spec + "'");
  const Field* found = nullptr;
  for (const Field& f : kFields)  // an exact name first, then the first prefix
    if (Lower(f.id) == want) found = &f;
  for (const Field& f : kFields)
    if (!found && Lower(f.id).rfind(want, 0) == 0) found = &f;
  if (!found) return InvalidArgument("Unknown field '" + name + "'");
  return Column{found, has_width ? width : found->width};
}

// Slurm's print_fields: right-aligned in the width, cut with '+'; headers cut without.
std::string Cell(const std::string& value, int width, bool header) {
  const std::size_t w = static_cast<std::size_t>(std::abs(width));
  std::string v = value;
  if (v.size() > w) v = header ? v.substr(0, w) : v.substr(0, w - 1) + "+";
  const std::string pad(w - v.size(), ' ');
  return width < 0 ? v + pad : pad + v;
}

std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

// sacctmgr's times: "HH:MM:SS", or "D-HH:MM:SS" from a day on.
std::string Duration(const nlohmann::json& seconds) {
  if (!seconds.is_number_integer()) return "";
  return FormatSlurmSpan(seconds.get<long long>());
}

std::string QosNames(const nlohmann::json& tables) {
  std::string out;
  for (const nlohmann::json& q : tables.value("qos", nlohmann::json::array()))
    out += (out.empty() ? "" : ",") + Str(q, "name");
  return out;
}

Row AccountRow(const nlohmann::json& a) {
  return {{"Account", Str(a, "name")},
          {"Description", Str(a, "description")},
          {"Organization", Str(a, "organization")}};
}

// An association: the account's own (user "") or a user's.
Row AssocRow(const nlohmann::json& tables, const nlohmann::json& as) {
  Row r = {{"Cluster", Str(tables, "cluster")},     {"Account", Str(as, "account")},
           {"User", Str(as, "user")},               {"ParentName", Str(as, "parent")},
           {"Fairshare", Str(as, "shares")},        {"GrpTRES", Str(as, "grp_tres")},
           {"MaxSubmitJobs", Str(as, "max_submit")}, {"QOS", QosNames(tables)},
           {"GrpJobs", Str(as, "grp_jobs")},        {"MaxJobs", Str(as, "max_jobs")}};
  return r;
}

// Associations in Slurm's order: each account, its users, then its child accounts.
std::vector<nlohmann::json> TreeOrder(const nlohmann::json& tables) {
  std::vector<nlohmann::json> out;
  const nlohmann::json& all = tables["associations"];
  std::vector<std::string> stack = {"root"};
  std::set<std::string> seen;
  std::function<void(const std::string&)> walk = [&](const std::string& account) {
    if (!seen.insert(account).second) return;
    for (const nlohmann::json& a : all)
      if (Str(a, "account") == account && Str(a, "user").empty()) out.push_back(a);
    for (const nlohmann::json& a : all)
      if (Str(a, "account") == account && !Str(a, "user").empty()) out.push_back(a);
    for (const nlohmann::json& a : all)
      if (Str(a, "parent") == account && Str(a, "user").empty()) walk(Str(a, "account"));
  };
  walk("root");
  return out;
}

const nlohmann::json* FindNamed(const nlohmann::json& list, const std::string& name) {
  for (const nlohmann::json& x : list)
    if (Str(x, "name") == name) return &x;
  return nullptr;
}

std::vector<Row> Rows(const nlohmann::json& tables, const SacctmgrList& l) {
  std::vector<Row> rows;
  const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& accounts = tables.contains("accounts") ? tables["accounts"] : empty;
  const nlohmann::json& users = tables.contains("users") ? tables["users"] : empty;
  switch (l.entity) {
    case Entity::kAccount:
      if (!l.with_assoc) {
        for (const nlohmann::json& a : accounts) rows.push_back(AccountRow(a));
        break;
      }
      for (const nlohmann::json& as : TreeOrder(tables)) {
        Row r = AssocRow(tables, as);
        if (const nlohmann::json* a = FindNamed(accounts, r["Account"])) r.merge(AccountRow(*a));
        if (!r["User"].empty()) r["ParentName"] = "";
        rows.push_back(std::move(r));
      }
      break;
    case Entity::kUser:
      for (const nlohmann::json& u : users) {
        const std::string name = Str(u, "name");
        Row base = {{"User", name},
                    {"DefaultAccount", Str(u, "default_account")},
                    {"AdminLevel", name == "root" ? "Administrator" : "None"}};
        if (!l.with_assoc) {
          rows.push_back(base);
          continue;
        }
        for (const nlohmann::json& as : TreeOrder(tables)) {
          if (Str(as, "user") != name) continue;
          Row r = AssocRow(tables, as);
          for (const auto& [k, v] : base) r[k] = v;
          rows.push_back(std::move(r));
        }
      }
      break;
    case Entity::kAssociation:
      for (const nlohmann::json& as : TreeOrder(tables)) rows.push_back(AssocRow(tables, as));
      break;
    case Entity::kQos:
      for (const nlohmann::json& q : tables.value("qos", empty)) {
        std::string preempt;
        for (const nlohmann::json& p : q.value("preempt", empty))
          preempt += (preempt.empty() ? "" : ",") + p.get<std::string>();
        std::string mode = Str(q, "preempt_mode");
        for (char& c : mode) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        rows.push_back({{"Name", Str(q, "name")},
                        {"Description", Str(q, "description")},
                        {"Priority", Str(q, "priority")},
                        {"GraceTime", Duration(q.value("grace_time", nlohmann::json(0)))},
                        {"Preempt", preempt},
                        {"PreemptMode", mode},
                        {"UsageFactor", "1.000000"},
                        {"GrpTRES", Str(q, "grp_tres")},
                        {"MaxWall", Duration(q.value("max_wall", nlohmann::json()))},
                        {"MaxTRESPerUser", Str(q, "max_tres_per_user")},
                        {"MaxSubmitJobsPerUser", Str(q, "max_submit_per_user")},
                        {"GrpJobs", Str(q, "grp_jobs")},
                        {"MaxJobsPerUser", Str(q, "max_jobs_per_user")},
                        {"MaxJobsPA", Str(q, "max_jobs_per_account")}});
      }
      break;
    case Entity::kCluster:
      rows.push_back({{"Cluster", Str(tables, "cluster")}, {"Fairshare", "1"}, {"QOS", QosNames(tables)}});
      break;
  }
  return rows;
}

// The field a row keeps a column's value under (aliases share one).
std::string RowKey(const Field& f) {
  const std::string id = f.id;
  if (id == "Share") return "Fairshare";
  if (id == "MaxTRESPU") return "MaxTRESPerUser";
  if (id == "MaxSubmitPU") return "MaxSubmitJobsPerUser";
  if (id == "MaxJobsPU") return "MaxJobsPerUser";
  if (id == "MaxJobsPerAccount") return "MaxJobsPA";
  if (id == "Name") return "Name";
  return id;
}

// The row's value for a condition key ("account", "user", "parent", "name").
std::string ConditionValue(const Row& r, const std::string& key, Entity e) {
  auto get = [&](const char* k) {
    auto it = r.find(k);
    return it == r.end() ? std::string() : it->second;
  };
  if (key == "account") return get("Account");
  if (key == "user") return get("User");
  if (key == "parent") return get("ParentName");
  if (key == "cluster") return get("Cluster");
  // name: the entity's own name
  return e == Entity::kAccount ? get("Account")
         : e == Entity::kUser  ? get("User")
         : e == Entity::kQos   ? get("Name")
                               : get("Cluster");
}

bool Keep(const Row& r, const SacctmgrList& l) {
  auto in = [](const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };
  if (!l.names.empty() && !in(l.names, ConditionValue(r, "name", l.entity))) return false;
  for (const auto& [key, values] : l.where)
    if (!in(values, ConditionValue(r, key, l.entity))) return false;
  return true;
}

}  // namespace

bool ParseSacctmgrEntity(const std::string& word, SacctmgrList::Entity* entity) {
  const std::string w = Lower(word);
  if (w == "account" || w == "accounts") *entity = Entity::kAccount;
  else if (w == "user" || w == "users") *entity = Entity::kUser;
  else if (w == "association" || w == "associations" || w == "assoc") *entity = Entity::kAssociation;
  else if (w == "qos") *entity = Entity::kQos;
  else if (w == "cluster" || w == "clusters") *entity = Entity::kCluster;
  else return false;
  return true;
}

Result<std::string> FormatSacctmgrList(const nlohmann::json& tables, const SacctmgrList& l) {
  static const std::set<std::string> kConditions = {"account", "user", "parent", "cluster", "name"};
  for (const auto& [key, values] : l.where)
    if (!kConditions.count(key)) return InvalidArgument("Unknown condition: " + key);
  std::vector<Column> columns;
  for (const std::string& spec : l.format.empty() ? Defaults(l) : l.format) {
    Result<Column> c = ResolveColumn(spec);
    if (!c.ok()) return c.status();
    columns.push_back(*c);
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells, bool header) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (l.parsable != SacctmgrList::Parsable::kNo) {
        out += cells[i];
        if (i + 1 < cells.size() || l.parsable == SacctmgrList::Parsable::kWithTrailing) out += '|';
      } else {
        out += Cell(cells[i], columns[i].width, header) + " ";
      }
    }
    out += '\n';
  };
  if (!l.noheader) {
    std::vector<std::string> titles;
    for (const Column& c : columns) titles.push_back(c.field->header);
    line(titles, true);
    if (l.parsable == SacctmgrList::Parsable::kNo) {
      std::vector<std::string> dashes;
      for (const Column& c : columns) dashes.push_back(std::string(std::abs(c.width), '-'));
      line(dashes, true);
    }
  }
  for (const Row& r : Rows(tables, l)) {
    if (!Keep(r, l)) continue;
    std::vector<std::string> cells;
    for (const Column& c : columns) {
      auto it = r.find(RowKey(*c.field));
      cells.push_back(it == r.end() ? "" : it->second);
    }
    line(cells, false);
  }
  return out;
}

}  // namespace lockstep::cli
#include "common/duration.h"
