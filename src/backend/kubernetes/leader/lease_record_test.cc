// The decision logic of leader election: a pure function of the observed Lease, the candidate's
// memory and the time.
#include "backend/kubernetes/leader/lease_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "backend/kubernetes/leader/leader_election.h"

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;
using Wall = std::chrono::system_clock;

const Steady::time_point kT0 = Steady::time_point(seconds(1000));
const Wall::time_point kWall = Wall::time_point(seconds(1714564800)) + milliseconds(123);

LeaseRecord HeldBy(const std::string& who, int transitions = 0) {
  return {who, 15, "2024-05-01T11:00:00.000000Z", "2024-05-01T11:59:50.000000Z", transitions};
}

TEST(LeaseRecord, MicroTimeIsRfc3339WithMicroseconds) {
  EXPECT_EQ(FormatMicroTime(kWall), "2024-05-01T12:00:00.123000Z");
  EXPECT_EQ(FormatMicroTime(Wall::time_point(seconds(0))), "1970-01-01T00:00:00.000000Z");
}

TEST(LeaseRecord, RoundTripsThroughTheLeaseObject) {
  const LeaseRecord r = HeldBy("a_1", 3);
  const nlohmann::json lease = LeaseObject("lockstep", "lockstepd", r);
  EXPECT_EQ(lease["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(lease["kind"], "Lease");
  EXPECT_EQ(lease["metadata"]["namespace"], "lockstep");
  EXPECT_EQ(lease["spec"]["holderIdentity"], "a_1");
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 3);
  EXPECT_EQ(LeaseRecordFromObject(lease), r);
  // A released lease has no holder field; a Lease without spec reads as empty.
  EXPECT_FALSE(LeaseSpecJson(ReleasedRecord(r, kWall)).contains("holderIdentity"));
  EXPECT_EQ(LeaseRecordFromObject(nlohmann::json::object()), LeaseRecord{});
}

TEST(DecideLeaseAction, CreatesAnAbsentLease) {
  const LeaseDecision d = DecideLeaseAction(std::nullopt, {}, "me", seconds(15), kT0, kWall);
  EXPECT_EQ(d.action, LeaseAction::kCreate);
  EXPECT_EQ(d.desired.holder_identity, "me");
  EXPECT_EQ(d.desired.lease_duration_seconds, 15);
  EXPECT_EQ(d.desired.lease_transitions, 0);
  EXPECT_EQ(d.desired.acquire_time, "2024-05-01T12:00:00.123000Z");
  EXPECT_EQ(d.desired.renew_time, d.desired.acquire_time);
}

TEST(DecideLeaseAction, BacksOffFromAFreshlySeenLeaseOfAnother) {
  // First look: the record is new to us, so its expiry counts from now, whatever renewTime says
  // (the holder's clock may be skewed).
  LeaseDecision d = DecideLeaseAction(HeldBy("other"), {}, "me", seconds(15), kT0, kWall);
  EXPECT_EQ(d.action, LeaseAction::kBackOff);
  EXPECT_EQ(d.expires_in, seconds(15));
  EXPECT_EQ(d.observation.time, kT0);
  ASSERT_TRUE(d.observation.record);
  EXPECT_EQ(d.observation.record->holder_identity, "other");
}

TEST(DecideLeaseAction, AcquiresOnlyAfterTheRecordStayedUnchangedForTheLeaseDuration) {
  LeaseDecision d = DecideLeaseAction(HeldBy("other"), {}, "me", seconds(15), kT0, kWall);
  // 14.9 s later, unchanged: still held.
  d = DecideLeaseAction(HeldBy("other"), d.observation, "me", seconds(15),
                        kT0 + milliseconds(14'900), kWall);
  EXPECT_EQ(d.action, LeaseAction::kBackOff);
  EXPECT_EQ(d.observation.time, kT0);  // unchanged record: the clock keeps running
  // 15 s: expired; take it over with one more transition.
  d = DecideLeaseAction(HeldBy("other", 4), d.observation, "me", seconds(15), kT0 + seconds(15),
                        kWall);
  // ...but the transitions count differs, so this is a changed record: back off again.
  EXPECT_EQ(d.action, LeaseAction::kBackOff);
  d = DecideLeaseAction(HeldBy("other", 4), d.observation, "me", seconds(15), kT0 + seconds(30),
                        kWall);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
  EXPECT_EQ(d.desired.holder_identity, "me");
  EXPECT_EQ(d.desired.lease_transitions, 5);
  EXPECT_EQ(d.desired.acquire_time, "2024-05-01T12:00:00.123000Z");
}

TEST(DecideLeaseAction, ARenewalByTheHolderRestartsTheExpiryClock) {
  LeaseDecision d = DecideLeaseAction(HeldBy("other"), {}, "me", seconds(15), kT0, kWall);
  LeaseRecord renewed = HeldBy("other");
  renewed.renew_time = "2024-05-01T12:00:10.000000Z";
  d = DecideLeaseAction(renewed, d.observation, "me", seconds(15), kT0 + seconds(10), kWall);
  EXPECT_EQ(d.action, LeaseAction::kBackOff);
  EXPECT_EQ(d.observation.time, kT0 + seconds(10));
  d = DecideLeaseAction(renewed, d.observation, "me", seconds(15), kT0 + seconds(20), kWall);
  EXPECT_EQ(d.action, LeaseAction::kBackOff);
  EXPECT_EQ(d.expires_in, seconds(5));
  d = DecideLeaseAction(renewed, d.observation, "me", seconds(15), kT0 + seconds(25), kWall);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
}

TEST(DecideLeaseAction, UsesTheDurationTheRecordSays) {
  LeaseRecord short_lease = HeldBy("other");
  short_lease.lease_duration_seconds = 2;
  LeaseDecision d = DecideLeaseAction(short_lease, {}, "me", seconds(15), kT0, kWall);
  d = DecideLeaseAction(short_lease, d.observation, "me", seconds(15), kT0 + seconds(2), kWall);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
  EXPECT_EQ(d.desired.lease_duration_seconds, 15);  // ours from now on
}

TEST(DecideLeaseAction, RenewsItsOwnLeaseKeepingAcquireTimeAndTransitions) {
  const LeaseRecord mine = HeldBy("me", 7);
  const LeaseDecision d = DecideLeaseAction(mine, {mine, kT0}, "me", seconds(15),
                                            kT0 + seconds(100), kWall);  // even long after
  EXPECT_EQ(d.action, LeaseAction::kRenew);
  EXPECT_EQ(d.desired.acquire_time, mine.acquire_time);
  EXPECT_EQ(d.desired.renew_time, "2024-05-01T12:00:00.123000Z");
  EXPECT_EQ(d.desired.lease_transitions, 7);
}

TEST(DecideLeaseAction, TakesAReleasedLeaseAtOnce) {
  const LeaseRecord released = ReleasedRecord(HeldBy("other", 2), kWall);
  EXPECT_EQ(released.holder_identity, "");
  EXPECT_EQ(released.lease_duration_seconds, 1);
  EXPECT_EQ(released.lease_transitions, 2);
  const LeaseDecision d = DecideLeaseAction(released, {}, "me", seconds(15), kT0, kWall);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
  EXPECT_EQ(d.desired.lease_transitions, 3);
}

TEST(LeaderElectionOptions, ValidatesTheDurations) {
  LeaderElectionOptions o;
  EXPECT_TRUE(ValidateLeaderElectionOptions(o).ok());
  o.lease_duration = seconds(2);
  o.renew_deadline = milliseconds(1500);
  o.retry_period = milliseconds(300);
  EXPECT_TRUE(ValidateLeaderElectionOptions(o).ok());
  o.renew_deadline = seconds(2);
  EXPECT_NE(ValidateLeaderElectionOptions(o).message().find("greater than renew_deadline"),
            std::string::npos);
  o.renew_deadline = milliseconds(350);
  EXPECT_NE(ValidateLeaderElectionOptions(o).message().find("1.2 * retry_period"),
            std::string::npos);
  o = {};
  o.lease_duration = milliseconds(15'500);
  EXPECT_NE(ValidateLeaderElectionOptions(o).message().find("whole number of seconds"),
            std::string::npos);
  o = {};
  o.retry_period = milliseconds(0);
  EXPECT_FALSE(ValidateLeaderElectionOptions(o).ok());
}

TEST(LeaderElectionOptions, DefaultIdentityIsHostAndPid) {
  const std::string id = DefaultLeaderIdentity();
  EXPECT_NE(id.find("_" + std::to_string(getpid())), std::string::npos) << id;
  EXPECT_GT(id.size(), std::to_string(getpid()).size() + 1);
}

}  // namespace
}  // namespace lockstep::kube
