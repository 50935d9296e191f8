#include "backend/kubernetes/leader/lease_record.h"

#include <ctime>

namespace lockstep::kube {

using nlohmann::json;

namespace {

std::string StringField(const json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int IntField(const json& spec, const char* key) {
  auto it = spec.find(key);
  return it != spec.end() && it->is_number_integer() ? it->get<int>() : 0;
}

}  // namespace

LeaseRecord LeaseRecordFromObject(const json& lease) {
  LeaseRecord r;
  auto spec = lease.find("spec");
  if (spec == lease.end() || !spec->is_object()) return r;
  r.holder_identity = StringField(*spec, "holderIdentity");
  r.lease_duration_seconds = IntField(*spec, "leaseDurationSeconds");
  r.acquire_time = StringField(*spec, "acquireTime");
  r.renew_time = StringField(*spec, "renewTime");
  r.lease_transitions = IntField(*spec, "leaseTransitions");
  return r;
}

json LeaseSpecJson(const LeaseRecord& r) {
  json spec = json::object();
  if (!r.holder_identity.empty()) spec["holderIdentity"] = r.holder_identity;
  spec["leaseDurationSeconds"] = r.lease_duration_seconds;
  if (!r.acquire_time.empty()) spec["acquireTime"] = r.acquire_time;
  if (!r.renew_time.empty()) spec["renewTime"] = r.renew_time;
  spec["leaseTransitions"] = r.lease_transitions;
  return spec;
}

json LeaseObject(const std::string& ns, const std::string& name, const LeaseRecord& record) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", LeaseSpecJson(record)}};
}

std::string FormatMicroTime(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
  long frac = static_cast<long>(us % 1'000'000);
  if (frac < 0) {
    frac += 1'000'000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

const char* LeaseActionName(LeaseAction action) {
  switch (action) {
    case LeaseAction::kCreate:
      return "create";
    case LeaseAction::kAcquire:
      return "acquire";
    case LeaseAction::kRenew:
      return "renew";
    case LeaseAction::kBackOff:
      return "back off";
  }
  return "?";
}

LeaseDecision DecideLeaseAction(const std::optional<LeaseRecord>& current,
                                const LeaseObservation& previous, const std::string& identity,
                                std::chrono::seconds lease_duration,
                                std::chrono::steady_clock::time_point now,
                                std::chrono::system_clock::time_point wall) {
  LeaseDecision d;
  d.observation = previous;
  const std::string stamp = FormatMicroTime(wall);
  if (!current) {
    d.action = LeaseAction::kCreate;
    d.desired = {identity, static_cast<int>(lease_duration.count()), stamp, stamp, 0};
    return d;
  }
  // The clock of expiry restarts whenever the record changes: a renewal, by anyone.
  if (!previous.record || *previous.record != *current) {
    d.observation = {current, now};
  }
  const auto expiry = d.observation.time + std::chrono::seconds(current->lease_duration_seconds);
  const bool mine = current->holder_identity == identity;
  if (!current->holder_identity.empty() && !mine && expiry > now) {
    d.action = LeaseAction::kBackOff;
    d.expires_in = expiry - now;
    return d;
  }
  d.desired.holder_identity = identity;
  d.desired.lease_duration_seconds = static_cast<int>(lease_duration.count());
  d.desired.renew_time = stamp;
  if (mine) {
    d.action = LeaseAction::kRenew;
    d.desired.acquire_time = current->acquire_time.empty() ? stamp : current->acquire_time;
    d.desired.lease_transitions = current->lease_transitions;
  } else {
    d.action = LeaseAction::kAcquire;
    d.desired.acquire_time = stamp;
    d.desired.lease_transitions = current->lease_transitions + 1;
  }
  return d;
}

LeaseRecord ReleasedRecord(const LeaseRecord& held, std::chrono::system_clock::time_point wall) {
  const std::string stamp = FormatMicroTime(wall);
  return {"", 1, stamp, stamp, held.lease_transitions};
}

}  // namespace lockstep::kube
