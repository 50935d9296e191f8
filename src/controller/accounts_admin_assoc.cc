// sacctmgr add/modify/delete account and user: the account tree and the users' associations.
#include <algorithm>

#include "controller/accounts_admin_internal.h"

namespace lockstep::controller::accounts_internal {
namespace {

using engine::kNone;

// Keeps the accounts `keep` says yes to, stored parents first (the engine's and the config's
// order), with parents and associations renumbered; associations of dropped accounts go too.
void RebuildAccounts(config::ClusterConfig& cluster, const std::vector<bool>& keep) {
  std::vector<engine::Account>& all = cluster.base.accounts;
  std::vector<std::uint32_t> order, remap(all.size(), kNone);
  // Breadth-first from the root: every parent before its children.
  order.push_back(0);
  remap[0] = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (std::uint32_t a = 0; a < all.size(); ++a) {
      if (remap[a] != kNone || !keep[a] || all[a].parent != order[i]) continue;
      remap[a] = static_cast<std::uint32_t>(order.size());
      order.push_back(a);
    }
  }
  std::vector<engine::Account> accounts;
  for (std::uint32_t a : order) {
    engine::Account acct = all[a];
    acct.parent = acct.parent == kNone ? kNone : remap[acct.parent];
    accounts.push_back(std::move(acct));
  }
  std::vector<engine::Association> assocs;
  for (engine::Association as : cluster.base.associations) {
    if (as.account >= remap.size() || remap[as.account] == kNone) continue;
    as.account = remap[as.account];
    assocs.push_back(as);
  }
  all = std::move(accounts);
  cluster.base.associations = std::move(assocs);
}

bool IsDescendant(const std::vector<engine::Account>& all, std::uint32_t a, std::uint32_t of) {
  for (std::uint32_t p = a; p != kNone; p = all[p].parent)
    if (p == of) return true;
  return false;
}

// The options that accounts and their associations take.
Status SetAccount(const std::map<std::string, std::string>& set, config::ClusterConfig& cluster,
                  AccountsExtras& extras, std::uint32_t a) {
  engine::Account& acct = cluster.base.accounts[a];
  for (const auto& [key, value] : set) {
    if (key == "description") {
      extras.account_description[acct.name] = value;
    } else if (key == "organization") {
      extras.account_organization[acct.name] = value;
    } else if (key == "fairshare") {
      Result<std::uint32_t> s = ParseShares(value);
      if (!s.ok()) return s.status();
      acct.shares = *s;
    } else if (key == "grptres") {
      LOCKSTEP_RETURN_IF_ERROR(ParseTres("GrpTRES", value, acct.grp_tres));
    } else if (key == "grpjobs") {
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("GrpJobs", value, acct.grp_jobs));
    } else if (key == "maxjobs") {
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("MaxJobs", value, acct.max_jobs));
    } else if (key == "maxsubmitjobs") {
      Result<std::int64_t> m = ParseCount("MaxSubmitJobs", value);
      if (!m.ok()) return m.status();
      if (*m < 0)
        extras.account_max_submit.erase(acct.name);
      else
        extras.account_max_submit[acct.name] = *m;
    } else if (key == "parent") {
      std::uint32_t p = cluster.AccountIndex(value);
      if (p == kNone) return InvalidArgument("Parent account '" + value + "' does not exist");
      if (a == 0) return InvalidArgument("the root account has no parent");
      if (IsDescendant(cluster.base.accounts, p, a))
        return InvalidArgument("account " + acct.name + " cannot be its own ancestor (" + value + ")");
      acct.parent = p;
    }
  }
  return Status::Ok();
}

Result<AccountsReport> AddAccounts(const AccountsChange& c, config::ClusterConfig& cluster,
                                   AccountsExtras& extras) {
  AccountsReport r{{" Adding Account(s)"}, false};
  const std::string parent = c.set.count("parent") ? c.set.at("parent") : "root";
  if (cluster.AccountIndex(parent) == kNone)
    return InvalidArgument("Parent account '" + parent + "' does not exist");
  for (const std::string& name : c.names) {
    LOCKSTEP_RETURN_IF_ERROR(CheckName("account", name));
    if (cluster.AccountIndex(name) != kNone) continue;
    engine::Account acct;
    acct.name = name;
    acct.parent = 0;
    cluster.base.accounts.push_back(std::move(acct));
    LOCKSTEP_RETURN_IF_ERROR(SetAccount(c.set, cluster, extras,
                                        static_cast<std::uint32_t>(cluster.base.accounts.size() - 1)));
    r.lines.push_back("  " + name);
    r.changed = true;
  }
  if (!r.changed) return AccountsReport{{" Nothing new added."}, false};
  RebuildAccounts(cluster, std::vector<bool>(cluster.base.accounts.size(), true));
  r.lines.push_back(" Settings");
  r.lines.push_back("  Description     = " +
                    (c.set.count("description") ? c.set.at("description") : "Account Name"));
  r.lines.push_back("  Organization    = " +
                    (c.set.count("organization") ? c.set.at("organization") : "Parent/Account Name"));
  r.lines.push_back(" Associations");
  for (std::size_t i = 1; i < r.lines.size() && r.lines[i] != " Settings"; ++i)
    r.lines.push_back("  A = " + r.lines[i].substr(2) + "    C = " + kClusterName);
  r.lines.push_back(" Settings");
  r.lines.push_back("  Parent        = " + parent);
  for (const auto& [key, value] : c.set)
    if (key != "parent" && key != "description" && key != "organization")
      r.lines.push_back("  " + key + " = " + value);
  return r;
}

// The accounts `c` names (by name, or by where parent=).
std::vector<std::uint32_t> MatchedAccounts(const AccountsChange& c, const config::ClusterConfig& cluster) {
  std::vector<std::uint32_t> out;
  const std::vector<engine::Account>& all = cluster.base.accounts;
  std::uint32_t parent = kNone;
  if (c.where.count("parent")) {
    parent = cluster.AccountIndex(c.where.at("parent"));
    if (parent == kNone) return out;
  }
  for (std::uint32_t a = 0; a < all.size(); ++a) {
    const bool named = c.names.empty() ||
                       std::find(c.names.begin(), c.names.end(), all[a].name) != c.names.end();
    if (named && (parent == kNone || all[a].parent == parent)) out.push_back(a);
  }
  return out;
}

Result<AccountsReport> DeleteAccounts(const std::vector<std::uint32_t>& doomed,
                                      config::ClusterConfig& cluster, AccountsExtras& extras,
                                      const ActiveUse& active) {
  const std::vector<engine::Account>& all = cluster.base.accounts;
  std::vector<bool> keep(all.size(), true);
  AccountsReport r{{" Deleting account(s)..."}, true};
  for (std::uint32_t a : doomed) {
    if (a == 0) return InvalidArgument("the root account cannot be deleted");
    if (active.accounts.count(all[a].name))
      return FailedPrecondition("Job(s) active, cancel job(s) before remove: account " + all[a].name);
    keep[a] = false;
    r.lines.push_back("  " + all[a].name);
  }
  for (std::uint32_t a = 0; a < all.size(); ++a)
    if (keep[a] && all[a].parent != kNone && !keep[all[a].parent])
      return FailedPrecondition("account " + all[all[a].parent].name + " has child account " +
                                all[a].name + ": delete or move it first");
  for (std::uint32_t a : doomed) {
    extras.account_description.erase(all[a].name);
    extras.account_organization.erase(all[a].name);
    extras.account_max_submit.erase(all[a].name);
    std::erase_if(extras.user_max_submit,
                  [&](const auto& kv) { return kv.first.second == all[a].name; });
  }
  RebuildAccounts(cluster, keep);
  return r;
}

}  // namespace

Result<AccountsReport> ApplyAccountChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                          AccountsExtras& extras, const ActiveUse& active) {
  if (c.where.count("account")) return InvalidArgument("Unknown condition: account (name or parent)");
  if (c.action == AccountsChange::Action::kAdd) return AddAccounts(c, cluster, extras);
  std::vector<std::uint32_t> matched = MatchedAccounts(c, cluster);
  if (matched.empty())
    return AccountsReport{
        {c.action == AccountsChange::Action::kDelete ? " Nothing deleted" : " Nothing modified"},
        false};
  if (c.action == AccountsChange::Action::kDelete)
    return DeleteAccounts(matched, cluster, extras, active);
  if (c.set.empty()) return InvalidArgument("modify needs something to 'set'");
  AccountsReport r{{" Modified account associations..."}, true};
  for (std::uint32_t a : matched) {
    LOCKSTEP_RETURN_IF_ERROR(SetAccount(c.set, cluster, extras, a));
    r.lines.push_back(std::string("  C = ") + kClusterName + "   A = " + cluster.base.accounts[a].name);
  }
  if (c.set.count("parent"))
    RebuildAccounts(cluster, std::vector<bool>(cluster.base.accounts.size(), true));
  return r;
}

// ---------------------------------------------------------------------------------------------
// Users: each (user, account) pair is an association; a user's first is its default account.

namespace {

std::uint32_t InternUser(config::ClusterConfig& cluster, const std::string& name) {
  std::uint32_t u = cluster.UserIndex(name);
  if (u != kNone) return u;
  cluster.users.push_back(name);
  return static_cast<std::uint32_t>(cluster.users.size() - 1);
}

// Moves the association of `user` in `account` before the user's other ones.
void MakeDefault(config::ClusterConfig& cluster, std::uint32_t user, std::uint32_t account) {
  std::vector<engine::Association>& all = cluster.base.associations;
  auto first = std::find_if(all.begin(), all.end(), [&](const auto& a) { return a.user == user; });
  auto it = std::find_if(all.begin(), all.end(),
                         [&](const auto& a) { return a.user == user && a.account == account; });
  if (first == all.end() || it == all.end() || it == first) return;
  std::rotate(first, it, it + 1);
}

Status SetAssociation(const std::map<std::string, std::string>& set, const std::string& user,
                      const std::string& account, AccountsExtras& extras, engine::Association& as) {
  for (const auto& [key, value] : set) {
    if (key == "fairshare") {
      Result<std::uint32_t> s = ParseShares(value);
      if (!s.ok()) return s.status();
      as.shares = *s;
    } else if (key == "maxjobs") {
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("MaxJobs", value, as.max_jobs));
    } else if (key == "maxsubmitjobs") {
      Result<std::int64_t> m = ParseCount("MaxSubmitJobs", value);
      if (!m.ok()) return m.status();
      if (*m < 0)
        extras.user_max_submit.erase({user, account});
      else
        extras.user_max_submit[{user, account}] = *m;
    }
  }
  return Status::Ok();
}

Result<AccountsReport> AddUsers(const AccountsChange& c, config::ClusterConfig& cluster,
                                AccountsExtras& extras) {
  std::vector<std::string> accounts;
  if (c.set.count("account")) accounts = SplitList(c.set.at("account"));
  const std::string def = c.set.count("defaultaccount") ? c.set.at("defaultaccount") : "";
  if (!def.empty() && std::find(accounts.begin(), accounts.end(), def) == accounts.end())
    accounts.insert(accounts.begin(), def);
  if (accounts.empty()) return InvalidArgument("Need a default account for these users to add (Account=)");
  for (const std::string& a : accounts)
    if (cluster.AccountIndex(a) == kNone) return InvalidArgument("Account '" + a + "' does not exist");
  AccountsReport r{{" Adding User(s)"}, false};
  std::vector<std::string> assoc_lines;
  for (const std::string& name : c.names) {
    LOCKSTEP_RETURN_IF_ERROR(CheckName("user", name));
    const std::uint32_t u = InternUser(cluster, name);
    bool added_user = false;
    for (const std::string& account : accounts) {
      const std::uint32_t a = cluster.AccountIndex(account);
      std::vector<engine::Association>& all = cluster.base.associations;
      if (std::any_of(all.begin(), all.end(), [&](const auto& x) { return x.user == u && x.account == a; }))
        continue;
      all.push_back(engine::Association{.user = u, .account = a, .shares = 1});
      LOCKSTEP_RETURN_IF_ERROR(SetAssociation(c.set, name, account, extras, all.back()));
      assoc_lines.push_back("  U = " + name + "    A = " + account + "    C = " + kClusterName);
      added_user = true;
    }
    if (!def.empty()) MakeDefault(cluster, u, cluster.AccountIndex(def));
    if (added_user) r.lines.push_back("  " + name);
    r.changed = r.changed || added_user;
  }
  if (!r.changed) return AccountsReport{{" Nothing new added."}, false};
  r.lines.push_back(" Associations =");
  r.lines.insert(r.lines.end(), assoc_lines.begin(), assoc_lines.end());
  return r;
}

}  // namespace

Result<AccountsReport> ApplyUserChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                       AccountsExtras& extras, const ActiveUse& active) {
  if (c.where.count("parent")) return InvalidArgument("Unknown condition: parent (name or account)");
  if (c.action == AccountsChange::Action::kAdd) return AddUsers(c, cluster, extras);
  if (c.set.count("account")) return InvalidArgument("Unknown option: account (add the user to it instead)");
  std::vector<std::string> accounts;
  if (c.where.count("account")) accounts = SplitList(c.where.at("account"));
  std::vector<engine::Association>& all = cluster.base.associations;
  auto matches = [&](const engine::Association& as) {
    const std::string& user = cluster.users[as.user];
    const std::string& account = cluster.base.accounts[as.account].name;
    return (c.names.empty() || std::find(c.names.begin(), c.names.end(), user) != c.names.end()) &&
           (accounts.empty() || std::find(accounts.begin(), accounts.end(), account) != accounts.end());
  };
  const bool del = c.action == AccountsChange::Action::kDelete;
  AccountsReport r{{del ? " Deleting user associations..." : " Modified user associations..."}, false};
  for (const engine::Association& as : all) {
    if (!matches(as)) continue;
    const std::string& user = cluster.users[as.user];
    const std::string& account = cluster.base.accounts[as.account].name;
    if (del && active.associations.count({user, account}))
      return FailedPrecondition("Job(s) active, cancel job(s) before remove: user " + user +
                                " in account " + account);
    r.lines.push_back(std::string("  C = ") + kClusterName + "   A = " + account + "   U = " + user);
    r.changed = true;
  }
  if (!r.changed) return AccountsReport{{del ? " Nothing deleted" : " Nothing modified"}, false};
  if (del) {
    for (const engine::Association& as : all)
      if (matches(as)) extras.user_max_submit.erase({cluster.users[as.user], cluster.base.accounts[as.account].name});
    std::erase_if(all, matches);
    return r;
  }
  if (c.set.empty()) return InvalidArgument("modify needs something to 'set'");
  if (c.set.count("defaultaccount")) {
    const std::uint32_t a = cluster.AccountIndex(c.set.at("defaultaccount"));
    for (const std::string& name : c.names) {
      const std::uint32_t u = cluster.UserIndex(name);
      if (u == kNone) continue;
      if (a == kNone || std::none_of(all.begin(), all.end(), [&](const auto& x) { return x.user == u && x.account == a; }))
        return InvalidArgument("User " + name + " has no association in account '" +
                               c.set.at("defaultaccount") + "': add it first");
      MakeDefault(cluster, u, a);
    }
  }
  for (engine::Association& as : all)
    if (matches(as))
      LOCKSTEP_RETURN_IF_ERROR(SetAssociation(c.set, cluster.users[as.user],
                                              cluster.base.accounts[as.account].name, extras, as));
  return r;
}

}  // namespace lockstep::controller::accounts_internal
