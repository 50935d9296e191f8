// Decoding sacctmgr's changes, the values they carry, and the tables' view. QoS changes:
// accounts_admin_qos.cc; accounts and users: accounts_admin_assoc.cc.
#include "controller/accounts_admin.h"

#include <algorithm>
#include <charconv>
#include <cctype>

#include "common/duration.h"
#include "controller/accounts_admin_internal.h"

namespace lockstep::controller {
namespace accounts_internal {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Result<std::int64_t> ParseCount(const std::string& key, const std::string& text) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < -1 || v > 0x7fffffff)
    return InvalidArgument("Bad " + key + " value: '" + text + "' (a number, or -1 to clear)");
  return v;
}

Status ParseJobLimit(const std::string& key, const std::string& text, std::int64_t& limit) {
  Result<std::int64_t> v = ParseCount(key, text);
  if (!v.ok()) return v.status();
  limit = *v < 0 ? kUnlimited : *v;
  return Status::Ok();
}

namespace {

// One TRES item "name=count" into `t`; -1 clears it.
Status ParseTresItem(const std::string& key, const std::string& item, engine::TresLimit& t) {
  std::size_t eq = item.find('=');
  if (eq == std::string::npos)
    return InvalidArgument("Bad " + key + " value: '" + item + "' (expected TRES=COUNT)");
  const std::string name = Lower(item.substr(0, eq)), value = item.substr(eq + 1);
  std::int64_t n = kUnlimited;
  if (value != "-1") {
    if (name == "mem") {
      Result<std::int64_t> mb = ParseMemoryMb(value);
      if (!mb.ok()) return InvalidArgument("Bad " + key + " value: '" + item + "'");
      n = *mb;
    } else {
      Result<std::int64_t> c = ParseCount(key, value);
      if (!c.ok() || *c < 0) return InvalidArgument("Bad " + key + " value: '" + item + "'");
      n = *c;
    }
  }
  if (name == "cpu") {
    t.cpus = n;
  } else if (name == "mem") {
    t.mem_mb = n;
  } else if (name == "node") {
    t.nodes = n;
  } else if (name == "gres/gpu" || name == "gpu") {
    t.gpus = n;
  } else {
    return InvalidArgument("Bad " + key + " value: unknown TRES '" + name +
                           "' (known: cpu, mem, node, gres/gpu)");
  }
  return Status::Ok();
}

}  // namespace

Status ParseTres(const std::string& key, const std::string& text, engine::TresLimit& t) {
  if (text == "-1") {
    t = engine::TresLimit{};
    return Status::Ok();
  }
  std::vector<std::string> items = SplitList(text);
  if (items.empty()) return InvalidArgument("Bad " + key + " value: '" + text + "'");
  for (const std::string& item : items) LOCKSTEP_RETURN_IF_ERROR(ParseTresItem(key, item, t));
  return Status::Ok();
}

Result<std::uint32_t> ParseShares(const std::string& text) {
  Result<std::int64_t> n = ParseCount("Fairshare", text);
  if (!n.ok()) return n.status();
  if (*n == 0) return InvalidArgument("Bad Fairshare value: '0' (at least 1, or -1 for 1)");
  return static_cast<std::uint32_t>(*n < 0 ? 1 : *n);
}

Status CheckName(const std::string& what, const std::string& name) {
  if (name.empty() || name.size() > 64) return InvalidArgument(what + " name must be 1 to 64 characters");
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.'))
      return InvalidArgument("invalid " + what + " name '" + name +
                             "' (letters, digits, '_', '-' and '.' only)");
  return Status::Ok();
}

}  // namespace accounts_internal

using namespace accounts_internal;

namespace {

// Canonical option names and their other spellings (Slurm's, case-insensitive).
const std::map<std::string, std::string>& Aliases() {
  static const std::map<std::string, std::string> kAliases = {
      {"name", "name"},
      {"names", "name"},
      {"account", "account"},
      {"accounts", "account"},
      {"acct", "account"},
      {"defaultaccount", "defaultaccount"},
      {"description", "description"},
      {"descr", "description"},
      {"organization", "organization"},
      {"org", "organization"},
      {"parent", "parent"},
      {"fairshare", "fairshare"},
      {"shares", "fairshare"},
      {"share", "fairshare"},
      {"grptres", "grptres"},
      {"grpjobs", "grpjobs"},
      {"maxjobs", "maxjobs"},
      {"maxjobsperuser", "maxjobsperuser"},
      {"maxjobspu", "maxjobsperuser"},
      {"maxjobsperaccount", "maxjobsperaccount"},
      {"maxjobspa", "maxjobsperaccount"},
      {"maxsubmitjobs", "maxsubmitjobs"},
      {"maxsubmit", "maxsubmitjobs"},
      {"maxsubmitjobsperuser", "maxsubmitjobsperuser"},
      {"maxsubmitjobspu", "maxsubmitjobsperuser"},
      {"maxsubmitpu", "maxsubmitjobsperuser"},
      {"maxtresperuser", "maxtresperuser"},
      {"maxtrespu", "maxtresperuser"},
      {"maxwall", "maxwall"},
      {"maxwalldurationperjob", "maxwall"},
      {"priority", "priority"},
      {"preempt", "preempt"},
      {"preemptmode", "preemptmode"},
      {"gracetime", "gracetime"},
      {"cluster", "cluster"},
      {"clusters", "cluster"},
  };
  return kAliases;
}

// Options Slurm has that lockstep's scheduler does not enforce: refused by name, not ignored.
bool NotEnforced(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "grpsubmitjobs", "grpsubmit",
      "grpwall",     "grptresmins",    "maxtres",    "maxtrespernode", "maxtresmins", "maxnodes",
      "maxcpus",     "grpcpus",        "grpnodes",   "grptresrunmins", "maxjobsaccrue",
      "grpjobsaccrue", "usagefactor",  "usagethreshold", "flags",   "mintres",       "qos",
      "defaultqos",  "adminlevel",     "partition",  "maxtresperaccount"};
  return kKeys.count(key) > 0;
}

// Which options each entity takes in `set` (and in add's settings).
const std::set<std::string>& Settable(AccountsChange::Entity e) {
  static const std::set<std::string> kAccount = {"description", "organization", "parent",
                                                 "fairshare",   "grptres",      "maxsubmitjobs",
                                                 "grpjobs",     "maxjobs"};
  static const std::set<std::string> kUser = {"account", "defaultaccount", "fairshare",
                                              "maxsubmitjobs", "maxjobs"};
  static const std::set<std::string> kQos = {"description", "priority",       "maxwall",
                                             "maxtresperuser", "grptres",     "preempt",
                                             "preemptmode", "gracetime", "maxsubmitjobsperuser",
                                             "grpjobs", "maxjobsperuser", "maxjobsperaccount",
                                             "maxjobs"};
  return e == AccountsChange::Entity::kAccount ? kAccount
         : e == AccountsChange::Entity::kUser  ? kUser
                                               : kQos;
}

Result<std::map<std::string, std::string>> DecodeOptions(const nlohmann::json& j,
                                                        const char* section) {
  std::map<std::string, std::string> out;
  if (j.is_null()) return out;
  if (!j.is_object()) return InvalidArgument(std::string(section) + ": expected an object");
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string())
      return InvalidArgument(std::string(section) + "." + key + ": expected a string");
    const std::string k = Lower(key);
    if (NotEnforced(k))
      return InvalidArgument("Unknown option: " + key + " (Slurm's " + key +
                             " is not enforced by lockstep's scheduler)");
    auto alias = Aliases().find(k);
    if (alias == Aliases().end()) return InvalidArgument("Unknown option: " + key);
    out[alias->second] = value.get<std::string>();
  }
  return out;
}

}  // namespace

Result<AccountsChange> DecodeAccountsChange(const nlohmann::json& request) {
  if (!request.is_object()) return InvalidArgument("expected a JSON object");
  for (const char* key : {"action", "entity"})
    if (!request.contains(key) || !request[key].is_string())
      return InvalidArgument(std::string(key) + ": expected a string");
  for (const auto& [key, value] : request.items())
    if (key != "action" && key != "entity" && key != "names" && key != "where" && key != "set" &&
        key != "commit")
      return InvalidArgument(key + ": unknown key (action, entity, names, where, set, commit)");
  AccountsChange c;
  const std::string action = Lower(request.value("action", ""));
  if (action == "add" || action == "create") {
    c.action = AccountsChange::Action::kAdd;
  } else if (action == "modify" || action == "update") {
    c.action = AccountsChange::Action::kModify;
  } else if (action == "delete" || action == "remove") {
    c.action = AccountsChange::Action::kDelete;
  } else {
    return InvalidArgument("action: expected add, modify or delete");
  }
  const std::string entity = Lower(request.value("entity", ""));
  if (entity == "account") {
    c.entity = AccountsChange::Entity::kAccount;
  } else if (entity == "user") {
    c.entity = AccountsChange::Entity::kUser;
  } else if (entity == "qos") {
    c.entity = AccountsChange::Entity::kQos;
  } else {
    return InvalidArgument("entity: expected account, user or qos");
  }
  if (request.contains("names")) {
    if (!request["names"].is_array()) return InvalidArgument("names: expected a list");
    for (const nlohmann::json& n : request["names"]) {
      if (!n.is_string()) return InvalidArgument("names: expected strings");
      for (const std::string& name : SplitList(n.get<std::string>())) c.names.push_back(name);
    }
  }
  Result<std::map<std::string, std::string>> where = DecodeOptions(request.value("where", nlohmann::json()), "where");
  if (!where.ok()) return where.status();
  Result<std::map<std::string, std::string>> set = DecodeOptions(request.value("set", nlohmann::json()), "set");
  if (!set.ok()) return set.status();
  c.where = std::move(*where);
  c.set = std::move(*set);
  // A Name= condition is the same as names given plainly.
  if (auto n = c.where.find("name"); n != c.where.end()) {
    for (const std::string& name : SplitList(n->second)) c.names.push_back(name);
    c.where.erase(n);
  }
  if (auto n = c.set.find("name"); n != c.set.end() && c.action == AccountsChange::Action::kAdd) {
    for (const std::string& name : SplitList(n->second)) c.names.push_back(name);
    c.set.erase(n);
  }
  if (auto cl = c.where.find("cluster"); cl != c.where.end()) {
    if (cl->second != kClusterName)
      return InvalidArgument("Unknown cluster '" + cl->second + "' (this one is " + kClusterName + ")");
    c.where.erase(cl);
  }
  c.set.erase("cluster");
  for (const auto& [key, value] : c.set) {
    if (!Settable(c.entity).count(key)) return InvalidArgument("Unknown option: " + key + " for " + entity);
    if (c.action == AccountsChange::Action::kDelete)
      return InvalidArgument("delete takes no 'set' options");
  }
  for (const auto& [key, value] : c.where)
    if (key != "account" && key != "parent")
      return InvalidArgument("Unknown condition: " + key + " (name, account or parent)");
  if (c.names.empty() && c.where.empty())
    return InvalidArgument("No " + entity + " name given");
  return c;
}

std::string FormatTresLimit(const engine::TresLimit& t) {
  std::string out;
  auto add = [&](const char* name, std::int64_t v, bool mem) {
    if (v >= kUnlimited) return;
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    if (mem && v > 0 && v % (1024 * 1024) == 0) {
      out += std::to_string(v / (1024 * 1024)) + "T";
    } else if (mem && v > 0 && v % 1024 == 0) {
      out += std::to_string(v / 1024) + "G";
    } else {
      out += std::to_string(v) + (mem ? "M" : "");
    }
  };
  add("cpu", t.cpus, false);
  add("mem", t.mem_mb, true);
  add("node", t.nodes, false);
  add("gres/gpu", t.gpus, false);
  return out;
}

std::int64_t MaxSubmitFor(const AccountsExtras& extras, const std::string& user,
                          const std::string& account, const std::string& qos) {
  std::int64_t limit = -1;
  auto tighten = [&](std::int64_t v) { limit = limit < 0 ? v : std::min(limit, v); };
  if (auto u = extras.user_max_submit.find({user, account}); u != extras.user_max_submit.end()) {
    tighten(u->second);
  } else if (auto a = extras.account_max_submit.find(account); a != extras.account_max_submit.end()) {
    tighten(a->second);
  }
  if (auto q = extras.qos_max_submit_per_user.find(qos); q != extras.qos_max_submit_per_user.end())
    tighten(q->second);
  return limit;
}

namespace {

nlohmann::json Limit(std::int64_t v) { return v >= kUnlimited ? nlohmann::json() : nlohmann::json(v); }

template <typename Map, typename Key>
nlohmann::json Optional(const Map& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? nlohmann::json() : nlohmann::json(it->second);
}

std::string Text(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? k : it->second;  // Slurm's default: the name itself
}

const char* PreemptModeName(engine::PreemptMode m) {
  return m == engine::PreemptMode::kCancel    ? "cancel"
         : m == engine::PreemptMode::kRequeue ? "requeue"
                                              : "off";
}

}  // namespace

nlohmann::json AccountsView(const config::ClusterConfig& cluster, const AccountsExtras& extras) {
  const engine::Snapshot& s = cluster.base;
  nlohmann::json accounts = nlohmann::json::array(), users = nlohmann::json::array(),
                 assocs = nlohmann::json::array(), qos = nlohmann::json::array();
  for (const engine::Account& a : s.accounts) {
    const std::string parent = a.parent < s.accounts.size() ? s.accounts[a.parent].name : "";
    accounts.push_back({{"name", a.name},
                        {"description", a.name == "root" && !extras.account_description.count("root")
                                            ? "default root account"
                                            : Text(extras.account_description, a.name)},
                        {"organization", Text(extras.account_organization, a.name)}});
    assocs.push_back({{"account", a.name},
                      {"user", ""},
                      {"parent", parent},
                      {"shares", a.shares},
                      {"grp_tres", FormatTresLimit(a.grp_tres)},
                      {"grp_jobs", Limit(a.grp_jobs)},
                      {"max_jobs", Limit(a.max_jobs)},
                      {"max_submit", Optional(extras.account_max_submit, a.name)}});
  }
  std::set<std::uint32_t> listed;
  for (const engine::Association& a : s.associations) {
    if (a.user >= cluster.users.size() || a.account >= s.accounts.size()) continue;
    const std::string& user = cluster.users[a.user];
    const std::string& account = s.accounts[a.account].name;
    assocs.push_back({{"account", account},
                      {"user", user},
                      {"parent", ""},
                      {"shares", a.shares},
                      {"grp_tres", ""},
                      {"grp_jobs", nullptr},
                      {"max_jobs", Limit(a.max_jobs)},
                      {"max_submit", Optional(extras.user_max_submit, std::pair(user, account))}});
    if (listed.insert(a.user).second)  // the first association is the default account
      users.push_back({{"name", user}, {"default_account", account}});
  }
  for (const engine::Qos& q : s.qos) {
    nlohmann::json preempt = nlohmann::json::array();
    for (std::uint32_t p : q.preempts)
      if (p < s.qos.size()) preempt.push_back(s.qos[p].name);
    qos.push_back({{"name", q.name},
                   {"description", Text(extras.qos_description, q.name)},
                   {"priority", q.priority},
                   {"max_wall", Limit(q.max_wall)},
                   {"max_tres_per_user", FormatTresLimit(q.max_tres_per_user)},
                   {"grp_tres", FormatTresLimit(q.grp_tres)},
                   {"grp_jobs", Limit(q.grp_jobs)},
                   {"max_jobs_per_user", Limit(q.max_jobs_per_user)},
                   {"max_jobs_per_account", Limit(q.max_jobs_per_account)},
                   {"preempt", preempt},
                   {"preempt_mode", PreemptModeName(q.preempt_mode)},
                   {"grace_time", q.grace_time},
                   {"max_submit_per_user", Optional(extras.qos_max_submit_per_user, q.name)}});
  }
  return {{"cluster", kClusterName},
          {"accounts", accounts},
          {"associations", assocs},
          {"users", users},
          {"qos", qos}};
}

Result<AccountsReport> ApplyAccountsChange(const AccountsChange& change, config::ClusterConfig& cluster,
                                           AccountsExtras& extras, const ActiveUse& active) {
  Result<AccountsReport> r = change.entity == AccountsChange::Entity::kQos
                                 ? ApplyQosChange(change, cluster, extras, active)
                             : change.entity == AccountsChange::Entity::kAccount
                                 ? ApplyAccountChange(change, cluster, extras, active)
                                 : ApplyUserChange(change, cluster, extras, active);
  if (r.ok()) cluster.InvalidateAssociationIndex();
  return r;
}

}  // namespace lockstep::controller
