#include "reservation/reservation.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "common/duration.h"
#include "common/hostlist.h"
#include "reservation/reservation_words.h"

namespace lockstep::reservation {
namespace {

constexpr Seconds kDay = 24 * 3600;

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void ApplyList(const ListChange& c, std::vector<std::string>& list) {
  if (c.op == ListOp::kSet) list.clear();
  for (const std::string& n : c.names) {
    if (c.op == ListOp::kRemove)
      std::erase(list, n);
    else if (!Contains(list, n))
      list.push_back(n);
  }
}

// Nodes=LIST|ALL as names in the cluster's order; every name must be a node.
Result<std::vector<std::string>> NamedNodes(const std::string& text, const ClusterFacts& facts) {
  std::vector<std::string> names;
  if (text == "ALL" || text == "all") return facts.node_names;
  Result<std::vector<std::string>> listed = ExpandHostlist(text);
  if (!listed.ok() || listed->empty()) return InvalidArgument("Invalid node name specified");
  std::set<std::string> wanted(listed->begin(), listed->end());
  for (const std::string& n : facts.node_names)
    if (wanted.erase(n)) names.push_back(n);
  if (!wanted.empty()) return InvalidArgument("Invalid node name specified");
  return names;
}

bool Overlaps(const Reservation& a, const Reservation& b) {
  if (a.end <= b.start || b.end <= a.start) return false;
  for (const std::string& n : a.nodes)
    if (Contains(b.nodes, n)) return true;
  return false;
}

// NodeCnt=N: the first N nodes of r's partition that are up, in no other reservation over the
// window (unless OVERLAP) and, unless IGNORE_JOBS, free of running work at its start.
Result<std::vector<std::string>> PickNodes(const Reservation& r, std::uint32_t count,
                                           const ClusterFacts& facts,
                                           const std::map<std::string, Reservation>& others) {
  auto part = std::find(facts.partition_names.begin(), facts.partition_names.end(), r.partition);
  if (part == facts.partition_names.end()) return InvalidArgument("Invalid partition name specified");
  std::vector<std::string> picked;
  for (std::uint32_t n : facts.partition_nodes[part - facts.partition_names.begin()]) {
    if (picked.size() == count) break;
    if (!facts.node_usable[n]) continue;
    if (!r.Has(kIgnoreJobs) && facts.busy_until[n] > r.start) continue;
    Reservation probe = r;
    probe.nodes = {facts.node_names[n]};
    const bool taken = std::any_of(others.begin(), others.end(), [&](const auto& o) {
      return o.first != r.name && Overlaps(probe, o.second) && !r.Has(kOverlap);
    });
    if (!taken) picked.push_back(facts.node_names[n]);
  }
  if (picked.size() < count) return InvalidArgument("Requested nodes are busy");
  return picked;
}

std::int64_t IndexOf(const std::vector<std::string>& v, const std::string& x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : it - v.begin();
}

// The words' times on `r`: StartTime alone moves the whole window (its duration kept), as
// Slurm's update does; EndTime or Duration set the end.
Status ApplyTimes(const ReservationWords& w, Reservation& r) {
  const Seconds length = r.end >= kInfiniteTime ? kUnlimited : r.end - r.start;
  if (w.start) r.start = *w.start;
  if (w.end)
    r.end = *w.end;
  else if (w.duration)
    r.end = *w.duration >= kUnlimited ? kInfiniteTime : r.start + *w.duration;
  else if (w.start)
    r.end = length >= kUnlimited ? kInfiniteTime : r.start + length;
  if (r.end <= r.start) return InvalidArgument("Invalid time specification");
  return Status::Ok();
}

}  // namespace

std::string FlagsText(const Reservation& r) {
  static const std::pair<Flag, const char*> kOrder[] = {
      {kMaint, "MAINT"},   {kFlex, "FLEX"},           {kOverlap, "OVERLAP"},
      {kIgnoreJobs, "IGNORE_JOBS"}, {kDaily, "DAILY"}, {kWeekly, "WEEKLY"},
      {kSpecNodes, "SPEC_NODES"},   {kAllNodes, "ALL_NODES"},
  };
  std::string out;
  for (const auto& [flag, name] : kOrder)
    if (r.Has(flag)) out += (out.empty() ? "" : ",") + std::string(name);
  if (r.Has(kPurgeComp))
    out += (out.empty() ? "" : ",") + std::string("PURGE_COMP=") + FormatSlurmSpan(r.purge_comp);
  return out;
}

Status ReservationBook::Check(const Reservation& r, const ClusterFacts& facts, Time now) const {
  if (r.users.empty() && r.accounts.empty())
    return InvalidArgument("Either Users/Groups and/or Accounts must be specified.");
  if (r.nodes.empty()) return InvalidArgument("Requested nodes are busy");
  if (r.end <= now) return InvalidArgument("Invalid time specification");
  if (!r.partition.empty() && IndexOf(facts.partition_names, r.partition) < 0)
    return InvalidArgument("Invalid partition name specified");
  for (const std::string& a : r.accounts)
    if (!facts.account_names.empty() && !Contains(facts.account_names, a))
      return InvalidArgument("Invalid account or account/partition combination specified");
  for (const auto& [name, other] : by_name_) {
    if (name == r.name || !Overlaps(r, other)) continue;
    if (!r.Has(kOverlap) && !other.Has(kOverlap))
      return InvalidArgument("Requested reservation overlaps with another reservation");
  }
  if (!r.Has(kIgnoreJobs)) {
    for (const std::string& n : r.nodes) {
      const std::int64_t i = IndexOf(facts.node_names, n);
      if (i >= 0 && facts.busy_until[i] > r.start) return InvalidArgument("Requested nodes are busy");
    }
  }
  return Status::Ok();
}

Result<std::string> ReservationBook::Create(const std::vector<std::string>& words,
                                            const ClusterFacts& facts, Time now) {
  Result<ReservationWords> w = ReadReservationWords(words, now, "created");
  if (!w.ok()) return w.status();
  const std::string tail = "  No reservation created.";
  if (!w->start) return InvalidArgument("StartTime must be specified." + tail);
  if (!w->end && !w->duration) return InvalidArgument("Duration or EndTime must be specified." + tail);
  if (!w->nodes && !w->node_count)
    return InvalidArgument("Nodes or NodeCnt must be specified." + tail);
  if ((!w->users || w->users->names.empty()) && (!w->accounts || w->accounts->names.empty()))
    return InvalidArgument("Either Users/Groups and/or Accounts must be specified." + tail);
  Reservation r;
  r.id = next_id_;
  r.flags = w->flags;
  if (w->purge_comp) r.purge_comp = *w->purge_comp;
  if (w->users) ApplyList(*w->users, r.users);
  if (w->accounts) ApplyList(*w->accounts, r.accounts);
  r.start = *w->start;
  r.end = r.start + 1;  // ApplyTimes sets it from EndTime or Duration
  LOCKSTEP_RETURN_IF_ERROR(ApplyTimes(*w, r));
  r.name = w->name ? *w->name : (r.users.empty() ? r.accounts[0] : r.users[0]) + "_" +
                                     std::to_string(r.id);
  if (by_name_.count(r.name)) return InvalidArgument("Duplicate reservation name");
  if (w->partition) r.partition = *w->partition;
  if (!r.partition.empty() && IndexOf(facts.partition_names, r.partition) < 0)
    return InvalidArgument("Invalid partition name specified");
  if (w->nodes) {
    Result<std::vector<std::string>> named = NamedNodes(*w->nodes, facts);
    if (!named.ok()) return named.status();
    r.nodes = std::move(*named);
    r.flags |= kSpecNodes;
    if (*w->nodes == "ALL" || *w->nodes == "all") r.flags |= kAllNodes;
  } else {
    // Slurm's: without named nodes the reservation lies in one partition, the default.
    if (r.partition.empty() && !facts.partition_names.empty())
      r.partition = facts.partition_names[facts.default_partition];
    Result<std::vector<std::string>> picked = PickNodes(r, *w->node_count, facts, by_name_);
    if (!picked.ok()) return picked.status();
    r.nodes = std::move(*picked);
  }
  LOCKSTEP_RETURN_IF_ERROR(Check(r, facts, now));
  ++next_id_;
  const std::string name = r.name;
  by_name_.emplace(name, std::move(r));
  return name;
}

Result<std::string> ReservationBook::Update(const std::vector<std::string>& words,
                                            const ClusterFacts& facts, Time now) {
  Result<ReservationWords> w = ReadReservationWords(words, now, "update");
  if (!w.ok()) return w.status();
  if (!w->name) return InvalidArgument("Reservation must be given.  No reservation update.");
  auto it = by_name_.find(*w->name);
  if (it == by_name_.end()) return NotFound("Requested reservation is invalid");
  Reservation r = it->second;
  LOCKSTEP_RETURN_IF_ERROR(ApplyTimes(*w, r));
  if (w->users) ApplyList(*w->users, r.users);
  if (w->accounts) ApplyList(*w->accounts, r.accounts);
  if (w->flags_op) {
    // Flags=X and Flags+=X add, Flags-=X takes away (Slurm's update keeps the other flags).
    if (*w->flags_op == ListOp::kRemove)
      r.flags &= ~w->flags;
    else
      r.flags |= w->flags;
  }
  if (w->purge_comp) r.purge_comp = *w->purge_comp;
  if (w->partition) r.partition = *w->partition;
  if (w->nodes) {
    Result<std::vector<std::string>> named = NamedNodes(*w->nodes, facts);
    if (!named.ok()) return named.status();
    r.nodes = std::move(*named);
    r.flags |= kSpecNodes;
  } else if (w->node_count) {
    Result<std::vector<std::string>> picked = PickNodes(r, *w->node_count, facts, by_name_);
    if (!picked.ok()) return picked.status();
    r.nodes = std::move(*picked);
    r.flags &= ~kSpecNodes;
  }
  LOCKSTEP_RETURN_IF_ERROR(Check(r, facts, now));
  it->second = std::move(r);
  return it->first;
}

Status ReservationBook::Delete(const std::string& name, bool jobs_in_it) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return NotFound("Requested reservation is invalid");
  if (jobs_in_it) return FailedPrecondition("Reservation request busy");
  by_name_.erase(it);
  return Status::Ok();
}

const Reservation* ReservationBook::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second;
}

bool ReservationBook::MayUse(const Reservation& r, const std::string& user,
                             const std::string& account) {
  if (!r.users.empty() && !Contains(r.users, user)) return false;
  if (!r.accounts.empty() && !Contains(r.accounts, account)) return false;
  return true;
}

ReservationBook::Turn ReservationBook::AdvanceWith(Time now, const std::vector<std::string>& busy,
                                                   const std::vector<std::string>& had_job_end) {
  Turn turn;
  for (auto it = by_name_.begin(); it != by_name_.end();) {
    Reservation& r = it->second;
    const bool has_jobs = Contains(busy, r.name);
    if (r.Has(kPurgeComp) && r.ActiveAt(now)) {
      if (has_jobs)
        r.idle_since = 0;
      else if (r.idle_since == 0 && Contains(had_job_end, r.name))
        r.idle_since = now;
      if (r.idle_since > 0 && now - r.idle_since >= r.purge_comp) r.end = now;
    }
    if (r.end > now) {
      ++it;
      continue;
    }
    const Seconds period = r.Has(kDaily) ? kDay : r.Has(kWeekly) ? 7 * kDay : 0;
    if (period > 0 && !r.Has(kPurgeComp)) {
      const Seconds steps = (now - r.end) / period + 1;
      r.start += steps * period;
      r.end += steps * period;
      turn.moved.push_back(r.name);
      ++it;
      continue;
    }
    turn.deleted.push_back(r.name);
    it = by_name_.erase(it);
  }
  return turn;
}

std::vector<engine::Window> ReservationBook::Windows(Time now,
                                                     const std::vector<std::string>& node_names) const {
  std::vector<engine::Window> out;
  for (const auto& [name, r] : by_name_) {
    if (r.end <= now) continue;
    engine::Window w;
    w.id = r.id;
    w.start = r.start;
    w.end = r.end;
    w.flex = r.Has(kFlex);
    for (const std::string& n : r.nodes)
      if (std::int64_t i = IndexOf(node_names, n); i >= 0) w.nodes.push_back(static_cast<std::uint32_t>(i));
    std::sort(w.nodes.begin(), w.nodes.end());
    out.push_back(std::move(w));
  }
  return out;
}

Time ReservationBook::NextChange(Time now) const {
  Time next = kInfiniteTime;
  for (const auto& [name, r] : by_name_) {
    if (r.start > now) next = std::min(next, r.start);
    if (r.end > now) next = std::min(next, r.end);
  }
  return next;
}

nlohmann::json ReservationBook::ToJson(const Reservation& r, Time now) {
  const bool infinite = r.end >= kInfiniteTime;
  return {{"name", r.name},
          {"id", r.id},
          {"start_time", r.start},
          {"end_time", infinite ? nlohmann::json(nullptr) : nlohmann::json(r.end)},
          {"duration", infinite ? nlohmann::json(nullptr) : nlohmann::json(r.end - r.start)},
          {"nodes", CompressHostlist(r.nodes)},
          {"node_names", r.nodes},
          {"node_count", r.nodes.size()},
          {"partition", r.partition},
          {"users", r.users},
          {"accounts", r.accounts},
          {"flags", FlagsText(r)},
          {"flag_bits", r.flags},
          {"purge_comp", r.purge_comp},
          {"idle_since", r.idle_since},
          {"state", r.ActiveAt(now) ? "ACTIVE" : "INACTIVE"}};
}

Result<Reservation> ReservationBook::FromJson(const nlohmann::json& j) {
  try {
    Reservation r;
    r.name = j.at("name").get<std::string>();
    r.id = j.at("id").get<std::uint32_t>();
    r.start = j.at("start_time").get<Time>();
    r.end = j.at("end_time").is_null() ? kInfiniteTime : j.at("end_time").get<Time>();
    r.nodes = j.at("node_names").get<std::vector<std::string>>();
    r.partition = j.at("partition").get<std::string>();
    r.users = j.at("users").get<std::vector<std::string>>();
    r.accounts = j.at("accounts").get<std::vector<std::string>>();
    r.flags = j.at("flag_bits").get<std::uint32_t>();
    r.purge_comp = j.at("purge_comp").get<Seconds>();
    r.idle_since = j.value("idle_since", Time{0});
    if (r.name.empty() || r.end <= r.start) return InvalidArgument("reservation: bad record");
    return r;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("reservation: ") + e.what());
  }
}

void ReservationBook::Restore(Reservation r) {
  next_id_ = std::max(next_id_, r.id + 1);
  const std::string name = r.name;
  by_name_[name] = std::move(r);
}

}  // namespace lockstep::reservation
