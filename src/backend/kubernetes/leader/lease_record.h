// The decision logic of leader election over a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package makes it (tryAcquireOrRenew), as a pure function of what the candidate
// observed and the time: no I/O, no clock reads. LeaderElector (leader_election.h) does the I/O.
//
// A lease is expired for a candidate when its record has not changed for leaseDurationSeconds
// of the candidate's own (monotonic) clock since it first saw that record. The holder's
// renewTime is written for people to read but never compared with the local clock, so clock skew
// between replicas does not matter.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lockstep::kube {

// The spec of a Lease, as leader election reads and writes it.
struct LeaseRecord {
  std::string holder_identity;  // "" : nobody holds it (released)
  int lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime text: "2024-05-01T12:00:00.123456Z"
  std::string renew_time;
  int lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// The record in a Lease object's spec; absent fields are empty or 0.
LeaseRecord LeaseRecordFromObject(const nlohmann::json& lease);
// The spec for `record` (empty times and holder omitted).
nlohmann::json LeaseSpecJson(const LeaseRecord& record);
// A new Lease object in `ns` named `name` holding `record`.
nlohmann::json LeaseObject(const std::string& ns, const std::string& name,
                           const LeaseRecord& record);
// RFC 3339 in UTC with microseconds, as metav1.MicroTime serializes.
std::string FormatMicroTime(std::chrono::system_clock::time_point t);

// What a candidate remembers between tries (client-go's observedRecord and observedTime).
struct LeaseObservation {
  std::optional<LeaseRecord> record;           // the last record seen; nullopt before any
  std::chrono::steady_clock::time_point time;  // when `record` was first seen as it is
};

enum class LeaseAction {
  kCreate,   // no Lease: create it holding it (AlreadyExists: someone else was faster)
  kAcquire,  // expired or released: take it over (leaseTransitions + 1)
  kRenew,    // we hold it: write a new renewTime
  kBackOff,  // someone else holds it and it has not expired: try again later
};
const char* LeaseActionName(LeaseAction action);

struct LeaseDecision {
  LeaseAction action = LeaseAction::kBackOff;
  LeaseRecord desired;           // what to write, unless kBackOff
  LeaseObservation observation;  // the candidate's memory after this look
  // For kBackOff: how long until the lease expires by the candidate's clock (0 if it has).
  std::chrono::steady_clock::duration expires_in{0};
};

// `current`: the Lease's record as just read (nullopt: the Lease does not exist). `previous`:
// the candidate's memory from its earlier tries. `now` (monotonic) and `wall` (written into
// acquireTime/renewTime) are the time of the look. `lease_duration` is what a new record says.
LeaseDecision DecideLeaseAction(const std::optional<LeaseRecord>& current,
                                const LeaseObservation& previous, const std::string& identity,
                                std::chrono::seconds lease_duration,
                                std::chrono::steady_clock::time_point now,
                                std::chrono::system_clock::time_point wall);

// The record a leader writes when it steps down (client-go's ReleaseOnCancel): no holder, a
// lease of 1 s, the transitions count kept, so the next candidate takes over at once.
LeaseRecord ReleasedRecord(const LeaseRecord& held, std::chrono::system_clock::time_point wall);

}  // namespace lockstep::kube
