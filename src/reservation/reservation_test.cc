// The reservation book as an operator drives it with scontrol: what is created, what is refused
// in Slurm's words (and changes nothing), updates, repeats, purges and the engine's windows.
#include "reservation/reservation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace lockstep::reservation {
namespace {

constexpr Time kNow = 1'800'000'000;

ClusterFacts EightNodes() {
  ClusterFacts f;
  for (int i = 1; i <= 8; ++i) f.node_names.push_back("node" + std::to_string(i));
  f.node_usable.assign(8, true);
  f.busy_until.assign(8, 0);
  f.partition_names = {"gpu", "debug"};
  f.partition_nodes = {{0, 1, 2, 3, 4, 5, 6, 7}, {6, 7}};
  f.account_names = {"root", "physics"};
  return f;
}

class ReservationBookTest : public ::testing::Test {
 protected:
  Result<std::string> Create(std::vector<std::string> words) {
    return book_.Create(words, facts_, kNow);
  }
  ReservationBook book_;
  ClusterFacts facts_ = EightNodes();
};

TEST_F(ReservationBookTest, MaintenanceInAnHourOnTwoNamedNodes) {
  Result<std::string> name = Create({"ReservationName=maint", "StartTime=now+1hour",
                                     "Duration=120", "Nodes=node[1-2]",
                                     "Flags=MAINT,IGNORE_JOBS", "Users=root"});
  ASSERT_TRUE(name.ok()) << name.status().message();
  const Reservation* r = book_.Find("maint");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->start, kNow + 3600);
  EXPECT_EQ(r->end, kNow + 3600 + 7200);
  EXPECT_EQ(r->nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(FlagsText(*r), "MAINT,IGNORE_JOBS,SPEC_NODES");
  const nlohmann::json j = ReservationBook::ToJson(*r, kNow);
  EXPECT_EQ(j["state"], "INACTIVE");
  EXPECT_EQ(j["nodes"], "node[1-2]");
  EXPECT_EQ(ReservationBook::ToJson(*r, kNow + 3600)["state"], "ACTIVE");
}

TEST_F(ReservationBookTest, KeysAreAbbreviatedAsScontrolTakesThem) {
  ASSERT_TRUE(Create({"res=a", "start=now", "dur=1:00:00", "nodes=node3", "user=alice"}).ok());
  EXPECT_EQ(book_.Find("a")->end, kNow + 3600);
}

TEST_F(ReservationBookTest, NodeCountPicksIdleNodesOfTheDefaultPartition) {
  facts_.busy_until[0] = kNow + 600;  // a job runs on node1 for ten more minutes
  Result<std::string> name = Create({"StartTime=now", "Duration=60", "NodeCnt=2", "Users=bob"});
  ASSERT_TRUE(name.ok()) << name.status().message();
  EXPECT_EQ(*name, "bob_1");  // Slurm's name: the first user and the id
  EXPECT_EQ(book_.Find("bob_1")->nodes, (std::vector<std::string>{"node2", "node3"}));
  EXPECT_EQ(book_.Find("bob_1")->partition, "gpu");
  EXPECT_EQ(FlagsText(*book_.Find("bob_1")), "");
}

TEST_F(ReservationBookTest, RefusalsInSlurmsWordsChangeNothing) {
  ASSERT_TRUE(Create({"ReservationName=m", "StartTime=now", "Duration=60", "Nodes=node1",
                      "Users=root"})
                  .ok());
  auto refusal = [&](std::vector<std::string> w) {
    Result<std::string> r = Create(std::move(w));
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_EQ(refusal({"ReservationName=m", "StartTime=now", "Duration=10", "Nodes=node5",
                     "Users=root"}),
            "Duplicate reservation name");
  EXPECT_EQ(refusal({"ReservationName=x", "StartTime=now", "Duration=10", "Nodes=node1",
                     "Users=root"}),
            "Requested reservation overlaps with another reservation");
  EXPECT_EQ(refusal({"ReservationName=y", "StartTime=now", "Duration=10", "Nodes=node9",
                     "Users=root"}),
            "Invalid node name specified");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=10", "Nodes=node5"}),
            "Either Users/Groups and/or Accounts must be specified.  No reservation created.");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=bogus", "Duration=10", "Nodes=node5",
                     "Users=root"}),
            "Invalid start time StartTime=bogus.  No reservation created.");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=10", "Nodes=node5",
                     "Users=root", "Flags=BOGUS"}),
            "Error parsing flags BOGUS.  No reservation created.");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=10", "Nodes=node5",
                     "Users=root", "Foo=bar"}),
            "Unknown parameter Foo=bar.  No reservation created.");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=-5", "Nodes=node5",
                     "Users=root"}),
            "Invalid duration Duration=-5.  No reservation created.");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=10", "NodeCnt=99",
                     "Users=root"}),
            "Requested nodes are busy");
  EXPECT_EQ(refusal({"ReservationName=z", "StartTime=now", "Duration=10", "Nodes=node5",
                     "Accounts=nosuch"}),
            "Invalid account or account/partition combination specified");
  EXPECT_EQ(book_.all().size(), 1u);
  // OVERLAP lets a reservation share nodes.
  EXPECT_TRUE(Create({"ReservationName=z", "StartTime=now", "Duration=10", "Nodes=node1",
                      "Users=root", "Flags=OVERLAP"})
                  .ok());
}

TEST_F(ReservationBookTest, BusyNodesAreRefusedUnlessIgnoreJobs) {
  facts_.busy_until[4] = kNow + 7200;
  Result<std::string> busy =
      Create({"ReservationName=m", "StartTime=now+1hour", "Duration=60", "Nodes=node5", "Users=root"});
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().message(), "Requested nodes are busy");
  EXPECT_TRUE(Create({"ReservationName=m", "StartTime=now+1hour", "Duration=60", "Nodes=node5",
                      "Users=root", "Flags=MAINT,IGNORE_JOBS"})
                  .ok());
}

TEST_F(ReservationBookTest, UpdateMovesAddsAndRemoves) {
  ASSERT_TRUE(Create({"ReservationName=fut", "StartTime=now+2hours", "Duration=60",
                      "Nodes=node8", "Users=root"})
                  .ok());
  ASSERT_TRUE(book_.Update({"ReservationName=fut", "Users+=nobody", "Nodes=node[6,8]",
                            "StartTime=now+3hours"},
                           facts_, kNow)
                  .ok());
  const Reservation* r = book_.Find("fut");
  EXPECT_EQ(r->start, kNow + 3 * 3600);
  EXPECT_EQ(r->end, kNow + 4 * 3600);  // StartTime alone keeps the duration
  EXPECT_EQ(r->users, (std::vector<std::string>{"root", "nobody"}));
  EXPECT_EQ(r->nodes, (std::vector<std::string>{"node6", "node8"}));
  ASSERT_TRUE(book_.Update({"ReservationName=fut", "Flags=MAINT"}, facts_, kNow).ok());
  EXPECT_EQ(FlagsText(*r), "MAINT,SPEC_NODES");
  ASSERT_TRUE(book_.Update({"ReservationName=fut", "Flags-=MAINT", "Users-=root"}, facts_, kNow).ok());
  EXPECT_EQ(FlagsText(*r), "SPEC_NODES");
  EXPECT_EQ(r->users, (std::vector<std::string>{"nobody"}));
  // A refused update changes nothing.
  Result<std::string> bad =
      book_.Update({"ReservationName=fut", "Duration=30", "Nodes=node99"}, facts_, kNow);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(r->end, kNow + 4 * 3600);
  EXPECT_EQ(book_.Update({"ReservationName=nosuch", "Duration=20"}, facts_, kNow).status().message(),
            "Requested reservation is invalid");
}

TEST_F(ReservationBookTest, AccessNeedsEveryListToNameTheJob) {
  ASSERT_TRUE(Create({"ReservationName=team", "StartTime=now", "Duration=60", "Nodes=node3",
                      "Users=alice,bob", "Accounts=physics"})
                  .ok());
  const Reservation& r = *book_.Find("team");
  EXPECT_TRUE(ReservationBook::MayUse(r, "alice", "physics"));
  EXPECT_FALSE(ReservationBook::MayUse(r, "carol", "physics"));
  EXPECT_FALSE(ReservationBook::MayUse(r, "alice", "root"));
}

TEST_F(ReservationBookTest, DailyRepeatsAndPlainOnesEnd) {
  ASSERT_TRUE(Create({"ReservationName=d", "StartTime=now", "Duration=60", "Nodes=node1",
                      "Users=root", "Flags=DAILY"})
                  .ok());
  ASSERT_TRUE(Create({"ReservationName=once", "StartTime=now", "Duration=60", "Nodes=node2",
                      "Users=root"})
                  .ok());
  auto none = [](const std::string&) { return false; };
  ReservationBook::Turn t = book_.Advance(kNow + 3600, none, {});
  EXPECT_EQ(t.moved, std::vector<std::string>{"d"});
  EXPECT_EQ(t.deleted, std::vector<std::string>{"once"});
  EXPECT_EQ(book_.Find("d")->start, kNow + 24 * 3600);
  EXPECT_EQ(book_.NextChange(kNow + 3600), kNow + 24 * 3600);
}

TEST_F(ReservationBookTest, PurgeCompDeletesOnceIdleAfterItsJobs) {
  ASSERT_TRUE(Create({"ReservationName=p", "StartTime=now", "Duration=1-00:00:00",
                      "Nodes=node1", "Users=root", "Flags=PURGE_COMP=10"})
                  .ok());
  EXPECT_EQ(FlagsText(*book_.Find("p")), "SPEC_NODES,PURGE_COMP=00:10:00");
  auto busy = [](const std::string&) { return true; };
  auto idle = [](const std::string&) { return false; };
  EXPECT_TRUE(book_.Advance(kNow + 60, busy, {}).deleted.empty());
  EXPECT_TRUE(book_.Advance(kNow + 120, idle, {}).deleted.empty());  // no job has ended yet
  EXPECT_TRUE(book_.Advance(kNow + 180, idle, {"p"}).deleted.empty());
  EXPECT_TRUE(book_.Advance(kNow + 180 + 599, idle, {}).deleted.empty());
  EXPECT_EQ(book_.Advance(kNow + 180 + 600, idle, {}).deleted, std::vector<std::string>{"p"});
}

TEST_F(ReservationBookTest, WindowsAndRecordsRoundTrip) {
  ASSERT_TRUE(Create({"ReservationName=f", "StartTime=now+10", "Duration=infinite",
                      "Nodes=node[7-8]", "Accounts=root", "Flags=FLEX"})
                  .ok());
  std::vector<engine::Window> w = book_.Windows(kNow, facts_.node_names);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].nodes, (std::vector<std::uint32_t>{6, 7}));
  EXPECT_TRUE(w[0].flex);
  EXPECT_EQ(w[0].end, kInfiniteTime);
  Result<Reservation> back = ReservationBook::FromJson(ReservationBook::ToJson(*book_.Find("f"), kNow));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->end, kInfiniteTime);
  EXPECT_EQ(back->accounts, std::vector<std::string>{"root"});
  EXPECT_EQ(back->flags, book_.Find("f")->flags);
  ReservationBook again;
  again.Restore(*back);
  ASSERT_TRUE(again.Create({"StartTime=now", "Duration=5", "Nodes=node1", "Users=x"}, facts_, kNow).ok());
  EXPECT_NE(again.Find("x_2"), nullptr);  // ids go on after the restored ones
}

TEST_F(ReservationBookTest, DeleteIsRefusedWhileJobsRunInIt) {
  ASSERT_TRUE(Create({"ReservationName=r", "StartTime=now", "Duration=5", "Nodes=node1",
                      "Users=x"})
                  .ok());
  EXPECT_EQ(book_.Delete("nosuch", false).message(), "Requested reservation is invalid");
  EXPECT_FALSE(book_.Delete("r", true).ok());
  EXPECT_TRUE(book_.Delete("r", false).ok());
  EXPECT_EQ(book_.Find("r"), nullptr);
}

}  // namespace
}  // namespace lockstep::reservation
