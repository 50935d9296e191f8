// Fair-share usage, as Slurm's priority/multifactor keeps it: every PriorityCalcPeriod (a minute
// when none is set) each running job charges its association its billing times the seconds it
// ran in the interval, after all usage has decayed with PriorityDecayHalfLife. Billing is the
// allocated CPUs, Slurm's default without TRESBillingWeights. The usage lives in the cluster's
// associations (so sacctmgr's changes, which copy them, keep it), is given to the scheduler, and
// is stored at each interval so that a restart of lockstepd keeps it (a crash loses at most one
// interval's charge).
#include "common/log.h"
#include "controller/controller.h"
#include "engine/fairshare.h"
#include "engine/scheduler.h"

namespace lockstep::controller {
namespace {

constexpr const char* kTable = "fairshare_usage";
constexpr const char* kKey = "associations";
constexpr Seconds kDefaultPeriod = 60;

std::string AssocName(const config::ClusterConfig& c, const engine::Association& a) {
  return c.users[a.user] + ":" + c.base.accounts[a.account].name;
}

bool Named(const config::ClusterConfig& c, const engine::Association& a) {  // not half-removed
  return a.user < c.users.size() && a.account < c.base.accounts.size();
}

}  // namespace

Seconds Controller::UsagePeriodLocked() const {
  return cluster_.policy.priority_calc_period > 0 ? cluster_.policy.priority_calc_period
                                                  : kDefaultPeriod;
}

void Controller::AccrueUsageLocked(Time now) {
  if (usage_time_ == 0) usage_time_ = now;  // the first pass: usage runs from here
  if (now - usage_time_ < UsagePeriodLocked()) return;
  const Seconds elapsed = now - usage_time_;
  std::vector<engine::Association>& assocs = cluster_.base.associations;
  for (engine::Association& a : assocs)
    a.usage = engine::DecayUsage(a.usage, elapsed, cluster_.fairshare_half_life);
  for (JobId id : active_) ChargeRunLocked(jobs_.at(id), now);
  usage_time_ = now;
  if (sched_) {
    for (std::uint32_t i = 0; i < assocs.size(); ++i) sched_->SetUsage(i, assocs[i].usage);
  }
  SaveUsageLocked();
}

void Controller::ChargeRunLocked(const JobEntry& e, Time now) {
  if (e.start_time <= 0 || e.placement.empty()) return;
  std::int64_t cpus = 0;
  for (const PlacedNode& n : e.placement) cpus += n.cpus;
  const Seconds ran = now - std::max(usage_time_, e.start_time);
  if (ran <= 0 || cpus <= 0) return;
  const std::uint32_t assoc = cluster_.AssociationFor(e.user, e.spec->account);
  cluster_.base.associations[assoc].usage += static_cast<double>(cpus) * static_cast<double>(ran);
}

void Controller::SaveUsageLocked() {
  nlohmann::json usage = nlohmann::json::object();
  for (const engine::Association& a : cluster_.base.associations)
    if (a.usage > 0 && Named(cluster_, a)) usage[AssocName(cluster_, a)] = a.usage;
  // Not waited for: losing the last interval's charge in a crash is what Slurm risks too.
  store_->PutAsync({{kTable, kKey, nlohmann::json{{"at", usage_time_}, {"usage", usage}}.dump()}});
}

Status Controller::RecoverUsage() {
  Result<std::optional<std::string>> stored = store_->Get(kTable, kKey);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return Status::Ok();
  nlohmann::json j = nlohmann::json::parse(**stored, nullptr, false);
  if (!j.is_object() || !j.contains("at") || !j["at"].is_number_integer() || !j.contains("usage") ||
      !j["usage"].is_object())
    return Internal("store: fair-share usage record is malformed: " + **stored);
  HeldLock lock(*this);
  usage_time_ = j["at"].get<Time>();  // the next interval decays it over the time it was down
  // Users and accounts the cluster file does not name get their association when their first
  // job is seen (AssociationFor); their usage makes it now. An association sacctmgr deleted is
  // not in the record: it is rewritten at every interval from the associations that exist.
  for (const auto& [name, value] : j["usage"].items()) {
    const std::size_t colon = name.find(':');
    if (colon == std::string::npos || !value.is_number())
      return Internal("store: fair-share usage of '" + name + "' is malformed");
    const std::uint32_t assoc = cluster_.AssociationFor(name.substr(0, colon), name.substr(colon + 1));
    cluster_.base.associations[assoc].usage = value.get<double>();
  }
  return Status::Ok();
}

}  // namespace lockstep::controller
