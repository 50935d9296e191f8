// LeaderElector against a real kube-apiserver (test_apiserver.h): two electors, exactly one
// leads; a leader that steps down hands over at once; a leader cut off from the apiserver gives
// up before the lease expires and the standby takes over; leaseTransitions counts takeovers.
// Short durations: lease 2 s, renew deadline 1.5 s, retry 0.3 s.
#include "backend/kubernetes/leader/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/kubernetes/client/test_apiserver.h"

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;
using testing::WaitFor;

constexpr char kNs[] = "lockstep";

LeaderElectionOptions ShortOptions(const std::string& lease, const std::string& identity) {
  LeaderElectionOptions o;
  o.ns = kNs;
  o.name = lease;
  o.identity = identity;
  o.lease_duration = std::chrono::seconds(2);
  o.renew_deadline = milliseconds(1500);
  o.retry_period = milliseconds(300);
  return o;
}

// One replica: its own client and elector, with counters of its callbacks.
struct Replica {
  std::unique_ptr<KubeClient> client;
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  std::atomic<bool> callback_on_caller_thread{false};
};

// Whether two electors ever led at once. An overlap begins when one starts leading while
// another still does, so each replica's on_started_leading asks the others then: checked at the
// moment it can happen, not sampled now and then.
class OverlapWatcher {
 public:
  void Add(const LeaderElector* elector) {
    std::lock_guard<std::mutex> lock(mu_);
    electors_.push_back(elector);
  }
  // On `self`'s thread, as it starts leading.
  void StartedLeading(const LeaderElector* self) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const LeaderElector* other : electors_)
      if (other != self && other->IsLeader()) overlap_ = true;
  }
  bool overlap() const {
    std::lock_guard<std::mutex> lock(mu_);
    return overlap_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<const LeaderElector*> electors_;  // guarded by mu_
  bool overlap_ = false;                        // guarded by mu_
};

class LeaderElectionTest : public testing::ApiServerTest {
 protected:
  static void SetUpTestSuite() {
    ApiServerTest::SetUpTestSuite();
    if (client_) CreateNamespace(kNs);
  }

  std::unique_ptr<Replica> NewReplica(const std::string& lease, const std::string& identity) {
    auto r = std::make_unique<Replica>();
    const LeaderElectionOptions o = ShortOptions(lease, identity);
    r->client = NewClient(LeaderElectionClientOptions(o));
    Replica* p = r.get();
    const auto test_thread = std::this_thread::get_id();
    r->elector = std::make_unique<LeaderElector>(
        p->client.get(), o,
        [this, p, test_thread] {
          if (std::this_thread::get_id() == test_thread) p->callback_on_caller_thread = true;
          overlap_.StartedLeading(p->elector.get());
          ++p->started;
        },
        [p] { ++p->stopped; });
    overlap_.Add(r->elector.get());
    return r;
  }

  // Every replica has tried `more` more times (each try a look at the lease and, leading, a
  // renewal): the barrier for "still so after several renewals".
  static bool WaitForMoreTries(const std::vector<Replica*>& replicas, int more) {
    std::vector<std::int64_t> before;
    for (Replica* r : replicas) before.push_back(r->elector->TriesForTest());
    return WaitFor(
        [&] {
          for (std::size_t i = 0; i < replicas.size(); ++i)
            if (replicas[i]->elector->TriesForTest() < before[i] + more) return false;
          return true;
        },
        milliseconds(20'000));
  }

  // The electors of this test (NewReplica): whether two led at once.
  OverlapWatcher overlap_;

  static LeaseRecord Lease(const std::string& name) {
    Result<Json> l = admin().Get("/apis/coordination.k8s.io/v1/namespaces/" + std::string(kNs) +
                                 "/leases/" + name);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return l.ok() ? LeaseRecordFromObject(*l) : LeaseRecord{};
  }
};

TEST_F(LeaderElectionTest, TwoElectorsExactlyOneLeads) {
  auto a = NewReplica("one-leads", "replica-a");
  auto b = NewReplica("one-leads", "replica-b");
  a->elector->Start();
  b->elector->Start();
  ASSERT_TRUE(WaitFor([&] { return a->elector->IsLeader() || b->elector->IsLeader(); },
                      milliseconds(5'000)));
  // Several renewals later (three more tries by each), still exactly one, and the same one.
  ASSERT_TRUE(WaitForMoreTries({a.get(), b.get()}, 3));
  EXPECT_NE(a->elector->IsLeader(), b->elector->IsLeader());
  EXPECT_EQ(a->started + b->started, 1);
  EXPECT_EQ(a->stopped + b->stopped, 0);
  EXPECT_FALSE(overlap_.overlap());
  EXPECT_FALSE(a->callback_on_caller_thread);
  const LeaseRecord lease = Lease("one-leads");
  EXPECT_EQ(lease.holder_identity, a->elector->IsLeader() ? "replica-a" : "replica-b");
  EXPECT_EQ(lease.lease_duration_seconds, 2);
  EXPECT_EQ(lease.lease_transitions, 0);
  EXPECT_FALSE(lease.renew_time.empty());
  a->elector->Stop();
  b->elector->Stop();
}

TEST_F(LeaderElectionTest, ALeaderThatStopsReleasesTheLeaseAndTheOtherTakesOver) {
  auto a = NewReplica("handover", "replica-a");
  a->elector->Start();
  ASSERT_TRUE(WaitFor([&] { return a->elector->IsLeader(); }, milliseconds(5'000)));
  auto b = NewReplica("handover", "replica-b");
  b->elector->Start();
  // B has looked at the lease twice (held by A) and backed off.
  ASSERT_TRUE(WaitFor([&] { return b->elector->TriesForTest() >= 2; }, milliseconds(20'000)));
  EXPECT_FALSE(b->elector->IsLeader());

  const auto t0 = std::chrono::steady_clock::now();
  a->elector->Stop();
  EXPECT_FALSE(a->elector->IsLeader());
  EXPECT_EQ(a->stopped, 1);
  // Released: the standby takes over within its retry period (with jitter), well before the
  // 2 s lease would have expired.
  ASSERT_TRUE(WaitFor([&] { return b->elector->IsLeader(); }, milliseconds(4'000)));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "handover after Stop() took %.2f s\n", took);
  EXPECT_LT(took, 2.0);
  EXPECT_EQ(b->started, 1);
  EXPECT_FALSE(overlap_.overlap());
  const LeaseRecord lease = Lease("handover");
  EXPECT_EQ(lease.holder_identity, "replica-b");
  EXPECT_EQ(lease.lease_transitions, 1);
  EXPECT_EQ(lease.lease_duration_seconds, 2);
  b->elector->Stop();
  EXPECT_EQ(Lease("handover").holder_identity, "");
  EXPECT_EQ(Lease("handover").lease_duration_seconds, 1);
}

TEST_F(LeaderElectionTest, ALeaderCutOffFromTheApiserverLosesLeadershipAndTheOtherTakesOver) {
  auto a = NewReplica("failover", "replica-a");
  a->elector->Start();
  ASSERT_TRUE(WaitFor([&] { return a->elector->IsLeader(); }, milliseconds(5'000)));
  auto b = NewReplica("failover", "replica-b");
  b->elector->Start();
  ASSERT_TRUE(WaitFor([&] { return b->elector->TriesForTest() >= 2; }, milliseconds(20'000)));
  ASSERT_FALSE(b->elector->IsLeader());

  // A is partitioned: it cannot renew, gives up after the renew deadline (1.5 s) and B, which
  // saw the record stop changing, takes over once the 2 s lease has expired by its clock.
  const auto t0 = std::chrono::steady_clock::now();
  a->elector->SetUnreachableForTest(true);
  ASSERT_TRUE(WaitFor([&] { return b->elector->IsLeader(); }, milliseconds(6'000)));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "failover after the leader was cut off took %.2f s\n", took);
  EXPECT_GE(took, 1.5);
  EXPECT_LT(took, 4.0);
  EXPECT_FALSE(a->elector->IsLeader());
  EXPECT_TRUE(WaitFor([&] { return a->stopped == 1; }, milliseconds(1'000)));
  EXPECT_FALSE(overlap_.overlap());
  EXPECT_EQ(Lease("failover").holder_identity, "replica-b");
  EXPECT_EQ(Lease("failover").lease_transitions, 1);

  // A reconnects: it is a standby now and does not lead while B renews.
  a->elector->SetUnreachableForTest(false);
  // A has read the lease (held by B) three times since, and B has renewed meanwhile.
  ASSERT_TRUE(WaitForMoreTries({a.get(), b.get()}, 3));
  EXPECT_FALSE(a->elector->IsLeader());
  EXPECT_TRUE(b->elector->IsLeader());
  EXPECT_EQ(a->started, 1);

  // B steps down: A leads again, the third holder in a row and the second takeover.
  b->elector->Stop();
  ASSERT_TRUE(WaitFor([&] { return a->elector->IsLeader(); }, milliseconds(4'000)));
  EXPECT_EQ(a->started, 2);
  EXPECT_EQ(b->stopped, 1);
  const LeaseRecord lease = Lease("failover");
  EXPECT_EQ(lease.holder_identity, "replica-a");
  EXPECT_EQ(lease.lease_transitions, 2);
  EXPECT_FALSE(overlap_.overlap());
  a->elector->Stop();
}

TEST_F(LeaderElectionTest, ManyCandidatesRacingForANewLeaseElectOne) {
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int i = 0; i < 4; ++i) replicas.push_back(NewReplica("race", "r" + std::to_string(i)));
  for (auto& r : replicas) r->elector->Start();
  auto leaders = [&] {
    int n = 0;
    for (auto& r : replicas) n += r->elector->IsLeader() ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return leaders() == 1; }, milliseconds(5'000)));
  // Three more tries by each (the leader's renewals, the others' looks): still one.
  std::vector<Replica*> all;
  for (auto& r : replicas) all.push_back(r.get());
  ASSERT_TRUE(WaitForMoreTries(all, 3));
  EXPECT_EQ(leaders(), 1);
  EXPECT_FALSE(overlap_.overlap());
  int started = 0;
  for (auto& r : replicas) started += r->started;
  EXPECT_EQ(started, 1);
  EXPECT_EQ(Lease("race").lease_transitions, 0);
  for (auto& r : replicas) r->elector->Stop();
}

}  // namespace
}  // namespace lockstep::kube
