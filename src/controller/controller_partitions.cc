// scontrol update PartitionName=P State=UP|DOWN|DRAIN|INACTIVE MaxTime=T Default=YES|NO:
// operators' changes to a partition. DOWN and INACTIVE partitions start none of their jobs:
// the engine is given their pending jobs as held (PendingEngineJobLocked), and squeue's reason
// says PartitionDown or PartitionInactive instead (ClosedPartitionReasonLocked), as Slurm's;
// DRAIN and INACTIVE take no new job (CheckPartitionOpenLocked, at submission and when an
// update moves a job there). MaxTime is the engine's own partition limit (PartitionTimeLimit).
// Each partition's changes are kept as one record of table "partitions" (key: its name; value:
// the fields operators set, {"state", "max_time", "default"}), replayed over the cluster YAML
// at start as sacctmgr's changes are (controller_accounts.cc). A change rebuilds the scheduler
// at the next replay, so every pending job's reason says what the partition now does.
#include <algorithm>
#include <cctype>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "engine/request.h"

namespace lockstep::controller {
namespace {

constexpr const char* kTable = "partitions";

std::string Lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

struct PartitionChange {
  std::optional<PartitionState> state;
  std::optional<Seconds> max_time;  // kUnlimited: none
  std::optional<bool> is_default;
};

Result<PartitionState> StateNamed(const std::string& name) {
  const std::string s = Lower(name);
  if (s == "up") return PartitionState::kUp;
  if (s == "down") return PartitionState::kDown;
  if (s == "drain") return PartitionState::kDrain;
  if (s == "inactive") return PartitionState::kInactive;
  return InvalidArgument("Invalid input: State=" + name +
                         ": acceptable State values are UP, DOWN, DRAIN and INACTIVE");
}

// The body of PATCH /api/v1/partitions/{name} (docs/api.md): every key checked.
Result<PartitionChange> DecodePartitionChange(const nlohmann::json& body) {
  if (!body.is_object() || body.empty())
    return InvalidArgument("partition update: the body must be an object naming a change");
  PartitionChange c;
  for (const auto& [key, value] : body.items()) {
    if (key == "state") {
      if (!value.is_string()) return InvalidArgument("partition update: state must be a string");
      Result<PartitionState> s = StateNamed(value.get<std::string>());
      if (!s.ok()) return s.status();
      c.state = *s;
    } else if (key == "max_time") {  // seconds; null: UNLIMITED
      if (value.is_null()) {
        c.max_time = kUnlimited;
      } else if (value.is_number_integer() && value.get<std::int64_t>() > 0 &&
                 value.get<std::int64_t>() < kUnlimited) {
        c.max_time = value.get<Seconds>();
      } else {
        return InvalidArgument("partition update: max_time must be a positive number of seconds "
                               "or null (UNLIMITED)");
      }
    } else if (key == "default") {
      if (!value.is_boolean()) return InvalidArgument("partition update: default must be true or false");
      c.is_default = value.get<bool>();
    } else {
      return InvalidArgument("partition update: '" + key + "' cannot be changed");
    }
  }
  return c;
}

}  // namespace

const char* PartitionStateName(PartitionState s) {
  switch (s) {
    case PartitionState::kUp:
      return "up";
    case PartitionState::kDown:
      return "down";
    case PartitionState::kDrain:
      return "drain";
    case PartitionState::kInactive:
      return "inactive";
  }
  return "up";
}

PartitionState Controller::PartitionStateLocked(std::uint32_t p) const {
  return p < partition_states_.size() ? partition_states_[p] : PartitionState::kUp;
}

engine::Job Controller::PendingEngineJobLocked(const JobEntry& e) {
  engine::Job j = ToEngineJob(e, cluster_);
  const PartitionState s = PartitionStateLocked(j.partition);
  if (s == PartitionState::kDown || s == PartitionState::kInactive) j.held_by_admin = true;
  return j;
}

const char* Controller::ClosedPartitionReasonLocked(const JobEntry& e) const {
  if (e.held_by_admin || e.held_by_user) return nullptr;  // its own hold says why
  const std::uint32_t p = e.spec->partition.empty() ? cluster_.default_partition
                                                    : cluster_.PartitionIndex(e.spec->partition);
  switch (PartitionStateLocked(p)) {
    case PartitionState::kDown:
      return "PartitionDown";
    case PartitionState::kInactive:
      return "PartitionInactive";
    default:
      return nullptr;
  }
}

void Controller::SetPartitionStateLocked(std::uint32_t p, PartitionState s) {
  if (partition_states_.size() <= p) partition_states_.resize(p + 1, PartitionState::kUp);
  partition_states_[p] = s;
}

Status Controller::CheckPartitionOpenLocked(const jobspec::JobSpec& spec) const {
  const std::uint32_t p =
      spec.partition.empty() ? cluster_.default_partition : cluster_.PartitionIndex(spec.partition);
  if (p >= cluster_.base.partitions.size()) return Status::Ok();  // ValidateSpec says so
  const PartitionState s = PartitionStateLocked(p);
  if (s == PartitionState::kDrain || s == PartitionState::kInactive)
    return Status(StatusCode::kFailedPrecondition,
                  "Required partition not available (inactive or drain): partition " +
                      cluster_.base.partitions[p].name + " is " + PartitionStateName(s));
  return Status::Ok();
}

Status Controller::UpdatePartition(const Caller& caller, const std::string& name,
                                   const nlohmann::json& body) {
  // Slurm's words (ESLURM_USER_ID_MISSING) for a user who is not an operator.
  if (!IsOperator(caller.uid))
    return PermissionDenied("Invalid user id: only an operator may change a partition");
  Result<PartitionChange> change = DecodePartitionChange(body);
  if (!change.ok()) return change.status();
  store::PendingWrite write;
  {
    HeldLock lock(*this);
    const std::uint32_t p = cluster_.PartitionIndex(name);
    if (p == engine::kNone) return NotFound("Invalid partition name specified: " + name);
    // lockstep always has a default partition: another becomes it with its own Default=YES.
    if (change->is_default == false && p == cluster_.default_partition)
      return InvalidArgument("Default=NO: partition " + name +
                             " is the default; set Default=YES on another partition instead");
    std::vector<std::string> changed = {name};
    engine::Partition& part = cluster_.base.partitions[p];
    std::vector<store::Record> records;
    if (change->max_time) FreezeRunningLimitsLocked(p, records);
    nlohmann::json& mine = partition_overrides_[name];
    if (change->state) {
      SetPartitionStateLocked(p, *change->state);
      mine["state"] = PartitionStateName(*change->state);
    }
    if (change->max_time) {
      part.max_time = *change->max_time;
      mine["max_time"] = *change->max_time >= kUnlimited ? nlohmann::json() : nlohmann::json(*change->max_time);
    }
    if (change->is_default == true && p != cluster_.default_partition) {
      cluster_.default_partition = p;
      mine["default"] = true;
      // The default is one partition's: whichever record said so before no longer does.
      for (auto& [other, fields] : partition_overrides_)
        if (other != name && fields.contains("default")) {
          fields.erase("default");
          changed.push_back(other);
        }
    }
    for (const std::string& n : changed)
      records.push_back({kTable, n, partition_overrides_[n].dump()});
    limits_changed_ = true;       // the scheduler is rebuilt: holds, static reasons, shapes
    full_pass_requested_ = true;  // pending reasons say what the partition now does
    shown_.clear();               // and are published again, PartitionDown or not
    write = QueueWriteLocked(std::move(records));
    RequestPassLocked();
  }
  return Durable(std::move(write));
}

void Controller::FreezeRunningLimitsLocked(std::uint32_t p, std::vector<store::Record>& records) {
  const engine::Partition& part = cluster_.base.partitions[p];
  for (JobId id : active_) {
    JobEntry& e = jobs_.at(id);
    if (e.spec->time_limit != 0) continue;
    const engine::Job j = ToEngineJob(e, cluster_);
    if (j.partition != p) continue;
    jobspec::JobSpec spec = *e.spec;
    spec.time_limit = engine::ShapeOf(j, part).duration;  // kUnlimited stays UNLIMITED
    e.spec = specs_.Intern(std::move(spec));
    TouchLocked(e);
    records.push_back({"jobs", JobKey(e.id), RecordOfLocked(e)});
  }
}

Status Controller::ReplayPartitionChanges() {
  Result<std::vector<store::Record>> records = store_->Scan(kTable);
  if (!records.ok()) return records.status();
  HeldLock lock(*this);
  for (const store::Record& r : *records) {
    nlohmann::json fields = nlohmann::json::parse(r.value, nullptr, false);
    Result<PartitionChange> change =
        fields.is_object() && !fields.empty() ? DecodePartitionChange(fields) : PartitionChange{};
    if (!change.ok())
      return Internal("store: partition change " + r.key + ": " + change.status().message());
    partition_overrides_[r.key] = fields.is_object() ? fields : nlohmann::json::object();
    // The YAML may have changed since: a partition it no longer has is skipped, and said.
    const std::uint32_t p = cluster_.PartitionIndex(r.key);
    if (p == engine::kNone) {
      log::Warning("stored partition change {} ({}): the cluster file has no such partition",
                   r.key, r.value);
      continue;
    }
    engine::Partition& part = cluster_.base.partitions[p];
    if (change->state) SetPartitionStateLocked(p, *change->state);
    if (change->max_time) part.max_time = *change->max_time;
    if (change->is_default == true) cluster_.default_partition = p;
  }
  if (!records->empty()) log::Info("applied stored changes of {} partition(s)", records->size());
  return Status::Ok();
}

}  // namespace lockstep::controller
