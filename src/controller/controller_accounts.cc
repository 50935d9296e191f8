// sacctmgr's side of the controller: the accounting tables, operators' changes to them (durable,
// then applied to scheduling), their replay over the cluster YAML at start, and the
// MaxSubmitJobs limits checked at submission.
#include <cstdio>

#include "common/log.h"
#include "controller/account_access.h"
#include "controller/controller.h"

namespace lockstep::controller {
namespace {

constexpr const char* kTable = "sacctmgr";

std::string ChangeKey(std::uint64_t n) {
  char key[24];
  std::snprintf(key, sizeof key, "%020llu", static_cast<unsigned long long>(n));
  return key;
}

// The account a job charges: the one it names (a submission records its user's default), else,
// for a job recorded before that, its user's default (first) association's.
std::string JobAccount(const JobEntry& e, const config::ClusterConfig& cluster) {
  if (!e.spec->account.empty()) return e.spec->account;
  return DefaultAccountOf(cluster, e.user);
}

std::string JobQos(const JobEntry& e, const config::ClusterConfig& cluster) {
  if (!e.spec->qos.empty()) return e.spec->qos;
  return cluster.default_qos < cluster.base.qos.size() ? cluster.base.qos[cluster.default_qos].name
                                                       : "normal";
}

bool IsActive(JobState s) {
  return s == JobState::kPending || HoldsAllocation(s);
}

}  // namespace

nlohmann::json Controller::AccountsTables() const {
  HeldLock lock(*this);
  return AccountsView(cluster_, accounts_extras_);
}

ActiveUse Controller::ActiveUseLocked() const {
  ActiveUse use;
  for (const auto& [id, e] : jobs_) {
    if (!IsActive(e.state)) continue;
    const std::string account = JobAccount(e, cluster_);
    use.accounts.insert(account);
    use.qos.insert(JobQos(e, cluster_));
    use.associations.insert({e.user, account});
  }
  return use;
}

Result<nlohmann::json> Controller::ChangeAccounts(const Caller& caller,
                                                  const nlohmann::json& request) {
  if (!IsOperator(caller.uid)) return PermissionDenied("Access/permission denied");
  Result<AccountsChange> change = DecodeAccountsChange(request);
  if (!change.ok()) return change.status();
  if (request.contains("commit") && !request["commit"].is_boolean())
    return InvalidArgument("commit: expected true or false");
  const bool commit = request.value("commit", true);
  nlohmann::json stored = request;
  stored.erase("commit");
  AccountsReport report;
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    // Applied to copies: a change that fails half-way leaves nothing behind.
    config::ClusterConfig cluster = cluster_;
    AccountsExtras extras = accounts_extras_;
    Result<AccountsReport> r = ApplyAccountsChange(*change, cluster, extras, ActiveUseLocked());
    if (!r.ok()) return r.status();
    report = std::move(*r);
    if (commit && report.changed) {
      cluster_.base.qos = std::move(cluster.base.qos);
      cluster_.base.accounts = std::move(cluster.base.accounts);
      cluster_.base.associations = std::move(cluster.base.associations);
      cluster_.users = std::move(cluster.users);
      cluster_.default_qos = cluster.default_qos;
      cluster_.InvalidateAssociationIndex();
      accounts_extras_ = std::move(extras);
      limits_changed_ = true;
      write = store_->PutAsync({{kTable, ChangeKey(++accounts_changes_), stored.dump()}});
      full_pass_requested_ = true;  // pending reasons say what the new limits do
      RequestPassLocked();
    }
  }
  if (commit && report.changed) LOCKSTEP_RETURN_IF_ERROR(Durable(std::move(write)));
  return nlohmann::json{{"lines", report.lines},
                        {"changed", report.changed},
                        {"committed", commit && report.changed}};
}

Status Controller::ReplayAccountsChanges() {
  Result<std::vector<store::Record>> records = store_->Scan(kTable);
  if (!records.ok()) return records.status();
  HeldLock lock(*this);
  for (const store::Record& r : *records) {
    accounts_changes_ = std::max<std::uint64_t>(accounts_changes_, std::stoull(r.key));
    nlohmann::json request = nlohmann::json::parse(r.value, nullptr, false);
    Result<AccountsChange> change = DecodeAccountsChange(request);
    if (!change.ok()) return Internal("store: sacctmgr change " + r.key + ": " + change.status().message());
    // The YAML may have changed since: a change that no longer applies is skipped, and said.
    config::ClusterConfig cluster = cluster_;
    AccountsExtras extras = accounts_extras_;
    Result<AccountsReport> applied = ApplyAccountsChange(*change, cluster, extras, ActiveUse{});
    if (!applied.ok()) {
      log::Warning("sacctmgr change {} ({}) no longer applies to the cluster file: {}", r.key,
                   r.value, applied.status().message());
      continue;
    }
    cluster_ = std::move(cluster);
    accounts_extras_ = std::move(extras);
  }
  if (!records->empty()) log::Info("applied {} stored sacctmgr change(s)", records->size());
  return Status::Ok();
}

Status Controller::CheckSubmitLimitsLocked(const Caller& caller, const jobspec::JobSpec& spec,
                                           std::uint64_t count) const {
  const AccountsExtras& x = accounts_extras_;
  // The cluster's max_submit_jobs counts the user's jobs in every account and QoS.
  const std::int64_t by_user =
      submit_limits_.max_submit_jobs == kUnlimited ? -1 : submit_limits_.max_submit_jobs;
  if (by_user < 0 && x.user_max_submit.empty() && x.account_max_submit.empty() &&
      x.qos_max_submit_per_user.empty())
    return Status::Ok();
  JobEntry probe;
  probe.user = caller.user;
  probe.spec = std::make_shared<const jobspec::JobSpec>(spec);
  const std::string account = JobAccount(probe, cluster_), qos = JobQos(probe, cluster_);
  // The association's limit counts the user's jobs in the account; the QoS's, in the QoS.
  const std::int64_t by_assoc = MaxSubmitFor(x, caller.user, account, "");
  auto q = x.qos_max_submit_per_user.find(qos);
  const std::int64_t by_qos = q == x.qos_max_submit_per_user.end() ? -1 : q->second;
  if (by_assoc < 0 && by_qos < 0 && by_user < 0) return Status::Ok();
  std::uint64_t in_account = 0, in_qos = 0, in_all = 0;
  for (const auto& [id, e] : jobs_) {
    if (e.uid != caller.uid || !IsActive(e.state)) continue;
    ++in_all;
    if (by_assoc >= 0 && JobAccount(e, cluster_) == account) ++in_account;
    if (by_qos >= 0 && JobQos(e, cluster_) == qos) ++in_qos;
  }
  for (const auto& [id, a] : pending_arrays_) {  // tasks not split off count one by one
    const JobEntry& t = a.tmpl();
    if (t.uid != caller.uid) continue;
    in_all += a.pending_count();
    if (by_assoc >= 0 && JobAccount(t, cluster_) == account) in_account += a.pending_count();
    if (by_qos >= 0 && JobQos(t, cluster_) == qos) in_qos += a.pending_count();
  }
  auto refuse = [&](const std::string& what, std::int64_t limit, std::uint64_t have) {
    return InvalidArgument(
        "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits): " +
        what + " allows " + std::to_string(limit) + " job(s) pending or running for user " +
        caller.user + ", who has " + std::to_string(have));
  };
  if (by_user >= 0 && in_all + count > static_cast<std::uint64_t>(by_user))
    return refuse("the cluster's MaxSubmitJobs (scheduler.max_submit_jobs)", by_user, in_all);
  if (by_assoc >= 0 && in_account + count > static_cast<std::uint64_t>(by_assoc))
    return refuse("MaxSubmitJobs of account " + account, by_assoc, in_account);
  if (by_qos >= 0 && in_qos + count > static_cast<std::uint64_t>(by_qos))
    return refuse("MaxSubmitJobsPerUser of QOS " + qos, by_qos, in_qos);
  return Status::Ok();
}

}  // namespace lockstep::controller
