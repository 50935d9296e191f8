#include "engine/limits.h"

namespace lockstep::engine {
namespace {

// Which field of `used + add` first goes over `limit`: 0 none, else 1 gpu, 2 cpu, 3 mem, 4 node.
int Exceeded(const Tres& used, const Tres& add, const TresLimit& limit) {
  if (used.gpus + add.gpus > limit.gpus && add.gpus > 0) return 1;
  if (used.cpus + add.cpus > limit.cpus && add.cpus > 0) return 2;
  if (used.mem_mb + add.mem_mb > limit.mem_mb && add.mem_mb > 0) return 3;
  if (used.nodes + add.nodes > limit.nodes && add.nodes > 0) return 4;
  return 0;
}

PendingReason Pick(int field, PendingReason gpu, PendingReason cpu, PendingReason mem,
                   PendingReason node) {
  switch (field) {
    case 1:
      return gpu;
    case 2:
      return cpu;
    case 3:
      return mem;
    case 4:
      return node;
  }
  return PendingReason::kNone;
}

}  // namespace

PendingReason CheckStaticLimits(const Job& job, const JobShape& shape, const Snapshot& s) {
  if (job.partition < s.partitions.size()) {
    const Partition& p = s.partitions[job.partition];
    if (shape.duration > p.max_time) return PendingReason::kPartitionTimeLimit;
    if (shape.nodes > p.max_nodes) return PendingReason::kPartitionNodeLimit;
  }
  if (job.qos < s.qos.size() && shape.duration > s.qos[job.qos].max_wall)
    return PendingReason::kQOSMaxWallDurationPerJobLimit;
  return PendingReason::kNone;
}

static bool Limited(const TresLimit& l) {
  return l.cpus != kUnlimited || l.mem_mb != kUnlimited || l.gpus != kUnlimited ||
         l.nodes != kUnlimited;
}

static bool JobsLimited(const Qos& q) {
  return q.grp_jobs != kUnlimited || q.max_jobs_per_user != kUnlimited ||
         q.max_jobs_per_account != kUnlimited;
}

LimitTracker::LimitTracker(const Snapshot& s) : s_(s) {
  for (const Qos& q : s.qos)
    any_limit_ |= Limited(q.max_tres_per_user) || Limited(q.grp_tres) || JobsLimited(q);
  for (const Account& a : s.accounts)
    any_limit_ |= Limited(a.grp_tres) || a.grp_jobs != kUnlimited || a.max_jobs != kUnlimited;
  for (const Association& as : s.associations) any_limit_ |= as.max_jobs != kUnlimited;
  if (!any_limit_) return;
  per_qos_.resize(s.qos.size());
  per_account_.resize(s.accounts.size());
  jobs_per_assoc_.resize(s.associations.size());
  for (const Job& j : s.running) AddRunning(j);
}

Tres LimitTracker::AllocatedTres(const Job& running) {
  Tres t;
  t.nodes = static_cast<std::int64_t>(running.allocation.nodes.size());
  for (const NodeAllocation& a : running.allocation.nodes) {
    t.cpus += a.cpus;
    t.mem_mb += a.mem_mb;
    t.gpus += __builtin_popcountll(a.gpus);
  }
  return t;
}

std::uint32_t LimitTracker::AccountOf(const Job& job) const {
  if (job.assoc >= s_.associations.size()) return kNone;
  std::uint32_t a = s_.associations[job.assoc].account;
  return a < s_.accounts.size() ? a : kNone;
}

std::int64_t LimitTracker::MaxJobsOf(std::uint32_t assoc) const {
  const Association& as = s_.associations[assoc];
  if (as.max_jobs != kUnlimited) return as.max_jobs;
  for (std::uint32_t a = as.account, guard = 0; a < s_.accounts.size() && guard < s_.accounts.size();
       a = s_.accounts[a].parent, ++guard) {
    if (s_.accounts[a].max_jobs != kUnlimited) return s_.accounts[a].max_jobs;
  }
  return kUnlimited;
}

// Slurm checks the counts before node selection (acct_policy_job_runnable_pre_select): the
// QoS's first, then the association's and its ancestors'.
PendingReason LimitTracker::CheckJobCounts(const Job& job) const {
  const std::uint32_t account = AccountOf(job);
  if (job.qos < s_.qos.size()) {
    const Qos& q = s_.qos[job.qos];
    if (per_qos_[job.qos].jobs + 1 > q.grp_jobs) return PendingReason::kQOSGrpJobsLimit;
    auto user = per_qos_user_.find(UserKey(job.qos, job.user));
    if ((user == per_qos_user_.end() ? 0 : user->second.jobs) + 1 > q.max_jobs_per_user)
      return PendingReason::kQOSMaxJobsPerUserLimit;
    if (account != kNone) {
      auto acct = jobs_per_qos_account_.find(UserKey(job.qos, account));
      if ((acct == jobs_per_qos_account_.end() ? 0 : acct->second) + 1 > q.max_jobs_per_account)
        return PendingReason::kQOSMaxJobsPerAccountLimit;
    }
  }
  if (job.assoc < s_.associations.size() &&
      jobs_per_assoc_[job.assoc] + 1 > MaxJobsOf(job.assoc))
    return PendingReason::kAssocMaxJobsLimit;
  for (std::uint32_t a = account, guard = 0; a < s_.accounts.size() && guard < s_.accounts.size();
       a = s_.accounts[a].parent, ++guard) {
    if (per_account_[a].jobs + 1 > s_.accounts[a].grp_jobs) return PendingReason::kAssocGrpJobsLimit;
  }
  return PendingReason::kNone;
}

bool LimitTracker::Binds(const Job& job) const {
  if (!any_limit_) return false;
  if (job.qos < s_.qos.size()) {
    const Qos& q = s_.qos[job.qos];
    if (Limited(q.max_tres_per_user) || Limited(q.grp_tres) || JobsLimited(q)) return true;
  }
  if (job.assoc < s_.associations.size() && MaxJobsOf(job.assoc) != kUnlimited) return true;
  for (std::uint32_t a = AccountOf(job), guard = 0;
       a < s_.accounts.size() && guard < s_.accounts.size(); a = s_.accounts[a].parent, ++guard)
    if (Limited(s_.accounts[a].grp_tres) || s_.accounts[a].grp_jobs != kUnlimited) return true;
  return false;
}

PendingReason LimitTracker::Check(const Job& job, const Tres& tres) const {
  if (!any_limit_) return PendingReason::kNone;
  if (PendingReason r = CheckJobCounts(job); r != PendingReason::kNone) return r;
  if (job.qos < s_.qos.size()) {
    const Qos& q = s_.qos[job.qos];
    auto it = per_qos_user_.find(UserKey(job.qos, job.user));
    Tres used = it == per_qos_user_.end() ? Tres{} : it->second.tres;
    int f = Exceeded(used, tres, q.max_tres_per_user);
    if (f)
      return Pick(f, PendingReason::kQOSMaxGRESPerUser, PendingReason::kQOSMaxCpuPerUserLimit,
                  PendingReason::kQOSMaxMemoryPerUser, PendingReason::kQOSMaxNodePerUserLimit);
    f = Exceeded(per_qos_[job.qos].tres, tres, q.grp_tres);
    if (f)
      return Pick(f, PendingReason::kQOSGrpGRES, PendingReason::kQOSGrpCpuLimit,
                  PendingReason::kQOSGrpMemLimit, PendingReason::kQOSGrpNodeLimit);
  }
  for (std::uint32_t a = AccountOf(job), guard = 0; a != kNone && guard < s_.accounts.size();
       a = s_.accounts[a].parent, ++guard) {
    if (a >= s_.accounts.size()) break;
    int f = Exceeded(per_account_[a].tres, tres, s_.accounts[a].grp_tres);
    if (f)
      return Pick(f, PendingReason::kAssocGrpGRES, PendingReason::kAssocGrpCpuLimit,
                  PendingReason::kAssocGrpMemLimit, PendingReason::kAssocGrpNodeLimit);
  }
  return PendingReason::kNone;
}

void LimitTracker::Add(const Job& job, const Tres& tres) {
  if (!any_limit_) return;
  const std::uint32_t account = AccountOf(job);
  if (job.qos < s_.qos.size()) {
    per_qos_user_[UserKey(job.qos, job.user)].Add(tres);
    per_qos_[job.qos].Add(tres);
    if (account != kNone) ++jobs_per_qos_account_[UserKey(job.qos, account)];
  }
  if (job.assoc < s_.associations.size()) ++jobs_per_assoc_[job.assoc];
  for (std::uint32_t a = account, guard = 0; a != kNone && guard < s_.accounts.size();
       a = s_.accounts[a].parent, ++guard) {
    if (a >= s_.accounts.size()) break;
    per_account_[a].Add(tres);
  }
}

void LimitTracker::RemoveRunning(const Job& running) {
  if (!any_limit_) return;
  const Tres tres = AllocatedTres(running);
  const std::uint32_t account = AccountOf(running);
  if (running.qos < s_.qos.size()) {
    // Keys whose count reaches zero go, so that the maps hold only what runs.
    auto user = per_qos_user_.find(UserKey(running.qos, running.user));
    if (user != per_qos_user_.end()) {
      user->second.Remove(tres);
      if (user->second.jobs <= 0) per_qos_user_.erase(user);
    }
    per_qos_[running.qos].Remove(tres);
    if (account != kNone) {
      auto it = jobs_per_qos_account_.find(UserKey(running.qos, account));
      if (it != jobs_per_qos_account_.end() && --it->second <= 0) jobs_per_qos_account_.erase(it);
    }
  }
  if (running.assoc < s_.associations.size()) --jobs_per_assoc_[running.assoc];
  for (std::uint32_t a = account, guard = 0; a != kNone && guard < s_.accounts.size();
       a = s_.accounts[a].parent, ++guard) {
    if (a >= s_.accounts.size()) break;
    per_account_[a].Remove(tres);
  }
}

}  // namespace lockstep::engine
