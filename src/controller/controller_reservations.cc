// Reservations in lockstepd: operators' changes (durable, then given to the scheduler as
// windows), the access check of --reservation, the reasons squeue shows for jobs they keep
// waiting, and their turns (DAILY/WEEKLY repeats, ends, PURGE_COMP).
#include <algorithm>

#include "common/hostlist.h"
#include "common/log.h"
#include "controller/account_access.h"
#include "controller/controller.h"
#include "controller/job_convert.h"
#include "engine/request.h"
#include "engine/scheduler.h"

namespace lockstep::controller {
namespace {

constexpr const char* kTable = "reservations";

std::vector<std::string> Words(const nlohmann::json& request) {
  std::vector<std::string> words;
  const nlohmann::json* w = request.contains("words") ? &request["words"] : nullptr;
  if (!w || !w->is_array()) return words;
  for (const nlohmann::json& x : *w)
    if (x.is_string()) words.push_back(x.get<std::string>());
  return words;
}

bool IsWaiting(JobState s) { return s == JobState::kPending || HoldsAllocation(s); }

}  // namespace

nlohmann::json Controller::ReservationsView() const {
  HeldLock lock(*this);
  const Time now = clock_.Now();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, r] : reservations_.all()) {
    nlohmann::json j = reservation::ReservationBook::ToJson(r, now);
    std::int64_t cpus = 0;
    for (const std::string& n : r.nodes)
      if (std::uint32_t i = NodeIndexLocked(n); i != engine::kNone) cpus += cluster_.base.nodes[i].cpus;
    j["cpu_count"] = cpus;
    j.erase("flag_bits");
    j.erase("idle_since");
    out.push_back(std::move(j));
  }
  return {{"reservations", std::move(out)}, {"now", now}};
}

reservation::ClusterFacts Controller::ReservationFactsLocked() const {
  reservation::ClusterFacts f;
  const engine::Snapshot& base = cluster_.base;
  for (std::uint32_t n = 0; n < base.nodes.size(); ++n) {
    f.node_names.push_back(base.nodes[n].name);
    f.node_usable.push_back(SchedulingStateLocked(n) == engine::NodeState::kUp);
  }
  f.busy_until.assign(base.nodes.size(), 0);
  for (JobId id : active_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    const JobEntry& e = it->second;
    engine::Job j = ToEngineJob(e, const_cast<config::ClusterConfig&>(cluster_));
    const Seconds limit = engine::ShapeOf(j, base.partitions[j.partition]).duration;
    const Time end = limit >= kUnlimited ? kInfiniteTime : e.start_time + limit + e.suspended_seconds;
    for (const PlacedNode& p : e.placement)
      if (std::uint32_t i = NodeIndexLocked(p.node); i != engine::kNone)
        f.busy_until[i] = std::max(f.busy_until[i], end);
  }
  for (std::uint32_t p = 0; p < base.partitions.size(); ++p) {
    f.partition_names.push_back(base.partitions[p].name);
    f.partition_nodes.push_back(base.partitions[p].nodes);
  }
  f.default_partition = cluster_.default_partition;
  for (const engine::Account& a : base.accounts) f.account_names.push_back(a.name);
  return f;
}

store::PendingWrite Controller::StoreReservationsLocked(const std::vector<std::string>& names) {
  std::vector<store::Record> put;
  std::vector<std::string> gone;
  const Time now = clock_.Now();
  for (const std::string& name : names) {
    if (const reservation::Reservation* r = reservations_.Find(name))
      put.push_back({kTable, name, reservation::ReservationBook::ToJson(*r, now).dump()});
    else
      gone.push_back(name);
  }
  windows_changed_ = true;
  full_pass_requested_ = true;  // reasons and expected starts change with the windows
  RequestPassLocked();
  // Deletions are rare (an operator's, an end): they commit on their own before the puts.
  if (!gone.empty()) {
    Status s = store_->Delete(kTable, gone);
    if (!s.ok()) log::Error("store: reservations {}: {}", gone.front(), s.message());
  }
  return store_->PutAsync(std::move(put));
}

Result<nlohmann::json> Controller::ChangeReservations(const Caller& caller,
                                                      const nlohmann::json& request) {
  if (!IsOperator(caller.uid)) return PermissionDenied("Access/permission denied");
  const std::string action = request.value("action", "");
  const std::vector<std::string> words = Words(request);
  store::PendingWrite write;
  std::string name;
  {
    HeldLock lock(*this);
    const Time now = clock_.Now();
    if (action == "create") {
      Result<std::string> made = reservations_.Create(words, ReservationFactsLocked(), now);
      if (!made.ok()) return made.status();
      name = *made;
    } else if (action == "update") {
      Result<std::string> changed = reservations_.Update(words, ReservationFactsLocked(), now);
      if (!changed.ok()) return changed.status();
      name = *changed;
    } else if (action == "delete") {
      name = request.value("name", "");
      bool running = false;
      for (JobId id : active_)
        if (auto it = jobs_.find(id); it != jobs_.end() && it->second.spec->reservation == name)
          running = true;
      LOCKSTEP_RETURN_IF_ERROR(reservations_.Delete(name, running));
    } else {
      return InvalidArgument("action: expected create, update or delete");
    }
    write = StoreReservationsLocked({name});
  }
  LOCKSTEP_RETURN_IF_ERROR(Durable(std::move(write)));
  return nlohmann::json{{"name", name}};
}

Status Controller::LoadReservations() {
  Result<std::vector<store::Record>> records = store_->Scan(kTable);
  if (!records.ok()) return records.status();
  HeldLock lock(*this);
  for (const store::Record& rec : *records) {
    nlohmann::json j = nlohmann::json::parse(rec.value, nullptr, false);
    Result<reservation::Reservation> r = reservation::ReservationBook::FromJson(j);
    if (!r.ok()) return Internal("store: reservation " + rec.key + ": " + r.status().message());
    reservations_.Restore(std::move(*r));
  }
  if (!records->empty()) log::Info("restored {} reservation(s)", records->size());
  windows_changed_ = true;
  return Status::Ok();
}

void Controller::SyncWindowsLocked(Time now) {
  if (!windows_changed_ || !sched_) return;
  windows_changed_ = false;
  std::vector<std::string> names;
  names.reserve(cluster_.base.nodes.size());
  for (const engine::Node& n : cluster_.base.nodes) names.push_back(n.name);
  std::map<std::string, std::uint32_t, std::less<>> ids;
  for (const auto& [name, r] : reservations_.all()) ids[name] = r.id;
  if (ids != cluster_.reservation_ids) {
    // A job's window id comes from its reservation's name: every job naming one is replayed.
    cluster_.reservation_ids = std::move(ids);
    for (const auto& [id, e] : jobs_)
      if (!e.spec->reservation.empty()) dirty_.insert(id);
  }
  sched_->SetWindows(reservations_.Windows(now, names));
}

void Controller::AdvanceReservationsLocked(Time now) {
  if (reservations_.all().empty()) return;
  std::set<std::string> with_jobs;
  const bool purging = std::any_of(reservations_.all().begin(), reservations_.all().end(),
                                   [](const auto& r) { return r.second.Has(reservation::kPurgeComp); });
  if (purging) {
    for (const auto& [id, e] : jobs_)
      if (!e.spec->reservation.empty() && IsWaiting(e.state)) with_jobs.insert(e.spec->reservation);
  }
  std::vector<std::string> ended;  // had jobs at the last turn, have none now
  for (const std::string& name : reservations_with_jobs_)
    if (!with_jobs.count(name)) ended.push_back(name);
  reservations_with_jobs_ = with_jobs;
  reservation::ReservationBook::Turn turn = reservations_.Advance(
      now, [&](const std::string& name) { return with_jobs.count(name) > 0; }, ended);
  if (turn.moved.empty() && turn.deleted.empty()) return;
  for (const std::string& name : turn.deleted) log::Info("reservation {} ended", name);
  std::vector<std::string> names = turn.moved;
  names.insert(names.end(), turn.deleted.begin(), turn.deleted.end());
  store::PendingWrite write = StoreReservationsLocked(names);
  (void)write;  // durable in the background: a lost turn is taken again after a restart
}

Status Controller::CheckReservationAccessLocked(const Caller& caller,
                                                const jobspec::JobSpec& spec) const {
  if (spec.reservation.empty()) return Status::Ok();
  const reservation::Reservation* r = reservations_.Find(spec.reservation);
  if (!r) return InvalidArgument("Requested reservation is invalid");
  const std::string account = spec.account.empty() ? DefaultAccountOf(cluster_, caller.user) : spec.account;
  if (!reservation::ReservationBook::MayUse(*r, caller.user, account))
    return PermissionDenied("Access denied to requested reservation");
  return Status::Ok();
}

std::string Controller::ReservationReasonLocked(const JobEntry& e, Time expected_start) const {
  const Time now = clock_.Now();
  if (!e.spec->reservation.empty()) {
    const reservation::Reservation* own = reservations_.Find(e.spec->reservation);
    if (!own) return "ReservationDeleted";
    return own->start > now ? "Reservation" : "";
  }
  // A job that waits for a window to end, or that needs (-w) nodes a window holds.
  std::vector<std::string> required;
  if (!e.spec->nodelist.empty()) {
    Result<std::vector<std::string>> listed = ExpandHostlist(e.spec->nodelist);
    if (listed.ok()) required = std::move(*listed);
  }
  for (const auto& [name, r] : reservations_.all()) {
    if (r.end <= now) continue;
    bool blocks = expected_start > 0 && expected_start == r.end;
    for (const std::string& n : required)
      blocks = blocks || std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end();
    if (!blocks) continue;
    return r.Has(reservation::kMaint) ? "ReqNodeNotAvail, Reserved for maintenance"
                                      : "ReqNodeNotAvail, May be reserved for other job";
  }
  return "";
}

}  // namespace lockstep::controller
