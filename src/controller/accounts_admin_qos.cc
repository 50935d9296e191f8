// sacctmgr add/modify/delete qos over the cluster's QoS table.
#include <algorithm>

#include "common/duration.h"
#include "controller/accounts_admin_internal.h"

namespace lockstep::controller::accounts_internal {
namespace {

// Applies the `set` options to one QoS (and its extras).
Status SetQos(const std::map<std::string, std::string>& set, config::ClusterConfig& cluster,
              AccountsExtras& extras, engine::Qos& q) {
  for (const auto& [key, value] : set) {
    if (key == "description") {
      extras.qos_description[q.name] = value;
    } else if (key == "priority") {
      Result<std::int64_t> p = ParseCount("Priority", value);
      if (!p.ok()) return p.status();
      q.priority = static_cast<std::uint32_t>(std::max<std::int64_t>(*p, 0));
    } else if (key == "maxwall") {
      Result<Seconds> w = ParseSlurmDuration(value);
      if (!w.ok()) return InvalidArgument("Bad MaxWall value: '" + value + "'");
      q.max_wall = *w;
    } else if (key == "maxtresperuser") {
      LOCKSTEP_RETURN_IF_ERROR(ParseTres("MaxTRESPerUser", value, q.max_tres_per_user));
    } else if (key == "grptres") {
      LOCKSTEP_RETURN_IF_ERROR(ParseTres("GrpTRES", value, q.grp_tres));
    } else if (key == "grpjobs") {
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("GrpJobs", value, q.grp_jobs));
    } else if (key == "maxjobsperuser" || key == "maxjobs") {  // Slurm reads a QoS's MaxJobs so
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("MaxJobsPerUser", value, q.max_jobs_per_user));
    } else if (key == "maxjobsperaccount") {
      LOCKSTEP_RETURN_IF_ERROR(ParseJobLimit("MaxJobsPerAccount", value, q.max_jobs_per_account));
    } else if (key == "preempt") {
      q.preempts.clear();
      for (const std::string& name : SplitList(value)) {
        std::uint32_t p = cluster.QosIndex(name);
        if (p == engine::kNone) return InvalidArgument("Bad Preempt value: no QOS '" + name + "'");
        q.preempts.push_back(p);
      }
    } else if (key == "preemptmode") {
      const std::string m = Lower(value);
      if (m == "off") {
        q.preempt_mode = engine::PreemptMode::kOff;
      } else if (m == "cancel") {
        q.preempt_mode = engine::PreemptMode::kCancel;
      } else if (m == "requeue") {
        q.preempt_mode = engine::PreemptMode::kRequeue;
      } else {
        return InvalidArgument("Bad PreemptMode value: '" + value + "' (off, cancel or requeue)");
      }
    } else if (key == "gracetime") {
      Result<std::int64_t> g = ParseCount("GraceTime", value);
      if (!g.ok()) return g.status();
      q.grace_time = std::max<std::int64_t>(*g, 0);
    } else if (key == "maxsubmitjobsperuser") {
      Result<std::int64_t> m = ParseCount("MaxSubmitJobsPerUser", value);
      if (!m.ok()) return m.status();
      if (*m < 0)
        extras.qos_max_submit_per_user.erase(q.name);
      else
        extras.qos_max_submit_per_user[q.name] = *m;
    }
  }
  return Status::Ok();
}

Result<AccountsReport> AddQos(const AccountsChange& c, config::ClusterConfig& cluster,
                              AccountsExtras& extras) {
  AccountsReport r;
  r.lines.push_back(" Adding QOS(s)");
  for (const std::string& name : c.names) {
    LOCKSTEP_RETURN_IF_ERROR(CheckName("QOS", name));
    if (cluster.QosIndex(name) != engine::kNone) continue;  // Slurm skips what exists
    engine::Qos q;
    q.name = name;
    cluster.base.qos.push_back(q);
    LOCKSTEP_RETURN_IF_ERROR(SetQos(c.set, cluster, extras, cluster.base.qos.back()));
    r.lines.push_back("  " + name);
    r.changed = true;
  }
  if (!r.changed) return AccountsReport{{" Nothing new added."}, false};
  r.lines.push_back(" Settings");
  r.lines.push_back("  Description    = " +
                    (c.set.count("description") ? c.set.at("description") : std::string("QOS Name")));
  for (const auto& [key, value] : c.set)
    if (key != "description") r.lines.push_back("  " + key + " = " + value);
  return r;
}

// The QoS that `c` names; an unknown name is an error, as nothing must change.
Result<std::vector<std::uint32_t>> NamedQos(const AccountsChange& c,
                                            const config::ClusterConfig& cluster) {
  std::vector<std::uint32_t> out;
  for (const std::string& name : c.names) {
    std::uint32_t q = cluster.QosIndex(name);
    if (q != engine::kNone) out.push_back(q);
  }
  return out;
}

Result<AccountsReport> DeleteQos(const std::vector<std::uint32_t>& doomed,
                                 config::ClusterConfig& cluster, AccountsExtras& extras,
                                 const ActiveUse& active) {
  AccountsReport r{{" Deleting QOS(s)..."}, true};
  std::vector<engine::Qos>& all = cluster.base.qos;
  for (std::uint32_t q : doomed) {
    if (active.qos.count(all[q].name))
      return FailedPrecondition("Job(s) active, cancel job(s) before remove: QOS " + all[q].name);
    if (q == cluster.default_qos)
      return FailedPrecondition("QOS " + all[q].name + " is the default QOS of jobs that name none");
    r.lines.push_back("  " + all[q].name);
  }
  // Indices shift: remap the default QoS and every Preempt list.
  std::vector<std::uint32_t> remap(all.size(), engine::kNone);
  std::vector<engine::Qos> kept;
  for (std::uint32_t q = 0; q < all.size(); ++q) {
    if (std::find(doomed.begin(), doomed.end(), q) != doomed.end()) {
      extras.qos_description.erase(all[q].name);
      extras.qos_max_submit_per_user.erase(all[q].name);
      continue;
    }
    remap[q] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(all[q]));
  }
  for (engine::Qos& q : kept) {
    std::vector<std::uint32_t> preempts;
    for (std::uint32_t p : q.preempts)
      if (remap[p] != engine::kNone) preempts.push_back(remap[p]);
    q.preempts = std::move(preempts);
  }
  cluster.default_qos = remap[cluster.default_qos];
  all = std::move(kept);
  return r;
}

}  // namespace

Result<AccountsReport> ApplyQosChange(const AccountsChange& c, config::ClusterConfig& cluster,
                                      AccountsExtras& extras, const ActiveUse& active) {
  if (!c.where.empty()) return InvalidArgument("QOS take no condition but their names");
  if (c.action == AccountsChange::Action::kAdd) return AddQos(c, cluster, extras);
  Result<std::vector<std::uint32_t>> named = NamedQos(c, cluster);
  if (!named.ok()) return named.status();
  if (named->empty())
    return AccountsReport{
        {c.action == AccountsChange::Action::kDelete ? " Nothing deleted" : " Nothing modified"},
        false};
  if (c.action == AccountsChange::Action::kDelete)
    return DeleteQos(*named, cluster, extras, active);
  if (c.set.empty()) return InvalidArgument("modify needs something to 'set'");
  AccountsReport r{{" Modified qos..."}, true};
  for (std::uint32_t q : *named) {
    LOCKSTEP_RETURN_IF_ERROR(SetQos(c.set, cluster, extras, cluster.base.qos[q]));
    r.lines.push_back("  " + cluster.base.qos[q].name);
  }
  return r;
}

}  // namespace lockstep::controller::accounts_internal
