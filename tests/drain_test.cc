// `lockstep drain --rolling` end to end: real lockstepd and agent, jobs on some nodes, the
// operator's --exec hook, deadlines, unknown nodes, nodes an operator drained before.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool Unavailable(const std::string& state) {
  return state.rfind("drain", 0) == 0 || state.rfind("down", 0) == 0;
}

// Polls the nodes on a thread of its own and keeps the most nodes ever seen drained at once.
class DrainWatcher {
 public:
  explicit DrainWatcher(Cluster& c)
      : thread_([this, &c] {
          while (!stop_) {
            nlohmann::json n = c.Get("/api/v1/nodes");
            int unavailable = 0;
            for (const auto& x : n.value("nodes", nlohmann::json::array()))
              unavailable += Unavailable(x.value("state", ""));
            max_ = std::max(max_.load(), unavailable);
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
          }
        }) {}
  ~DrainWatcher() { Stop(); }
  int Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return max_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> max_{0};
  std::thread thread_;
};

nlohmann::json NodeJson(Cluster& c, const std::string& name) {
  for (const auto& n : c.Get("/api/v1/nodes").value("nodes", nlohmann::json::array()))
    if (n["name"] == name) return n;
  return nullptr;
}

void WaitRunning(Cluster& c, const std::vector<unsigned long long>& ids) {
  for (unsigned long long id : ids)
    for (int i = 0; i < 200 && c.Job(id)["state"] != "RUNNING"; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
}

// Jobs on node1 and node2 end after 3 s, those elsewhere after 8 s; every job leaves
// <node>.done behind. Batches of 2: node[1-2] is maintained while the long jobs go on.
TEST(Drain, RollingBatchesOfTwoWaitForJobsRunExecAndResume) {
  ClusterOptions o;
  o.nodes = 4;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  std::vector<unsigned long long> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(Submit(c, {"--exclusive", "--wrap",
                             "case $SLURMD_NODENAME in node1|node2) sleep 3;; *) sleep 8;; esac; "
                             "touch $SLURMD_NODENAME.done"}));
  for (unsigned long long id : ids) ASSERT_GT(id, 0u);
  WaitRunning(c, ids);
  std::set<std::string> busy;
  unsigned long long long_job = 0;
  for (unsigned long long id : ids) {
    nlohmann::json j = c.Job(id);
    ASSERT_EQ(j["state"], "RUNNING");
    std::string node = j["nodes"];
    busy.insert(node);
    if (node != "node1" && node != "node2") long_job = id;
  }
  ASSERT_EQ(busy.size(), 3u);
  ASSERT_NE(long_job, 0u) << "three exclusive jobs on four nodes: one is on node3 or node4";

  // The hook records the batch, the .done files (jobs that ended), every node's state, and
  // the long job's state.
  std::string lockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  std::string hook =
      "echo \"$LOCKSTEP_NODES $LOCKSTEP_NODE_COUNT $(ls *.done 2>/dev/null | tr "
      "'\\n' ' ')\" >> maint.log; " +
      lockstep + " sinfo -N -h -o '%N %T' >> states.log; " + lockstep + " squeue -h -j " +
      std::to_string(long_job) + " -o '%t' >> long.log";
  DrainWatcher watcher(c);
  auto start = std::chrono::steady_clock::now();
  CommandResult r = c.Run({"drain", "--rolling", "node[1-4]", "--batch", "2", "--interval", "0.2",
                           "--reason", "kernel 6.8", "--exec", hook});
  int max_unavailable = watcher.Stop();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LE(max_unavailable, 2) << r.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(25));

  // Two batches, each after its jobs ended.
  std::vector<std::string> maint = Lines(c.ReadFile("maint.log"));
  ASSERT_EQ(maint.size(), 2u) << c.ReadFile("maint.log") << r.out;
  EXPECT_EQ(maint[0].rfind("node[1-2] 2 ", 0), 0u) << maint[0];
  EXPECT_EQ(maint[1].rfind("node[3-4] 2 ", 0), 0u) << maint[1];
  for (const std::string& node : busy) {
    bool first = node == "node1" || node == "node2";
    EXPECT_TRUE(Contains(maint[first ? 0 : 1], node + ".done")) << node << ": " << maint[0];
  }
  // While node[1-2] were maintained, the long job went on, and only they were drained.
  std::vector<std::string> long_states = Lines(c.ReadFile("long.log"));
  ASSERT_FALSE(long_states.empty());
  EXPECT_EQ(long_states[0], "R");
  std::vector<std::string> states = Lines(c.ReadFile("states.log"));
  ASSERT_EQ(states.size(), 8u) << c.ReadFile("states.log");
  for (int i = 0; i < 8; ++i) {
    bool in_batch = (i < 4) == (i % 4 < 2);
    EXPECT_EQ(Unavailable(states[i].substr(states[i].find(' ') + 1)), in_batch) << states[i];
  }
  nlohmann::json lj = c.Job(long_job);
  EXPECT_EQ(lj["state"], "COMPLETED");
  EXPECT_EQ(lj["restart_count"], 0);

  // Progress lines, and every node idle and resumed, without a reason.
  EXPECT_TRUE(Contains(r.out, "node[1-2]: draining, 2 jobs running")) << r.out;
  EXPECT_TRUE(Contains(r.out, "node[3-4]: draining, 1 job running")) << r.out;
  EXPECT_TRUE(Contains(r.out, "node[3-4]: resumed")) << r.out;
  EXPECT_TRUE(c.WaitNodes("idle", 4, 5));
  for (const auto& n : c.Get("/api/v1/nodes")["nodes"]) EXPECT_EQ(n["reason"], "") << n.dump();
}

// Past the deadline a job is requeued, or cancelled when it may not be; the drain goes on.
TEST(Drain, DeadlineRequeuesOrCancelsJobsAndGoesOn) {
  Cluster c;  // node1, node2
  ASSERT_TRUE(c.Start());
  unsigned long long requeue = Submit(c, {"--exclusive", "--wrap", "sleep 300"});
  unsigned long long cancel = Submit(c, {"--exclusive", "--no-requeue", "--wrap", "sleep 300"});
  ASSERT_TRUE(requeue && cancel);
  WaitRunning(c, {requeue, cancel});
  CommandResult r = c.Run({"drain", "--rolling", "node[1-2]", "--deadline", "0:02", "--interval",
                           "0.2", "--exec", "echo $LOCKSTEP_NODES >> maint.log", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(c.ReadFile("maint.log"), "node1\nnode2\n");
  EXPECT_TRUE(Contains(r.err, "deadline 0:02 passed: job " + std::to_string(requeue))) << r.err;
  EXPECT_TRUE(Contains(r.err, "requeued")) << r.err;
  EXPECT_TRUE(Contains(r.err, "cancelled: it may not be requeued")) << r.err;
  EXPECT_EQ(c.WaitJob(cancel)["state"], "CANCELLED");
  // The requeued job runs again once a node is back.
  nlohmann::json j;
  for (int i = 0; i < 200 && (j = c.Job(requeue))["state"] != "RUNNING"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(j["state"], "RUNNING");
  EXPECT_EQ(j["restart_count"], 1);

  nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  EXPECT_EQ(report["result"], "done");
  ASSERT_EQ(report["batches"].size(), 2u);
  std::set<unsigned long long> requeued, cancelled;
  for (const auto& b : report["batches"]) {
    EXPECT_EQ(b["state"], "resumed");
    for (const auto& id : b["requeued"]) requeued.insert(id.get<unsigned long long>());
    for (const auto& id : b["cancelled"]) cancelled.insert(id.get<unsigned long long>());
  }
  EXPECT_EQ(requeued, std::set<unsigned long long>{requeue});
  EXPECT_EQ(cancelled, std::set<unsigned long long>{cancel});
  c.Run({"scancel", std::to_string(requeue)});
}

// Unknown nodes change nothing; a node an operator drained before stays drained; a failing
// --exec stops with its batch drained; drain and resume alone.
TEST(Drain, UnknownNodesOperatorDrainsFailingExecAndPlainDrainResume) {
  ClusterOptions o;
  o.nodes = 3;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"drain", "--rolling", "node[1-2],node9,gpu1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "unknown nodes")) << r.err;
  EXPECT_TRUE(Contains(r.err, "node9")) << r.err;
  EXPECT_TRUE(Contains(r.err, "gpu1")) << r.err;
  EXPECT_TRUE(c.WaitNodes("idle", 3, 1)) << "an unknown node changed something";

  r = c.Run({"scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=bad dimm"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"drain", "--rolling", "node[1-3]", "--interval", "0.2", "--exec",
             "echo $LOCKSTEP_NODES >> maint.log; test $LOCKSTEP_NODES != node3"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "node2: already drained by an operator (bad dimm)")) << r.out;
  EXPECT_TRUE(Contains(r.err, "--exec failed on node3 (exit 1)")) << r.err;
  EXPECT_TRUE(Contains(r.out, "left drained: node3")) << r.out;
  EXPECT_EQ(c.ReadFile("maint.log"), "node1\nnode2\nnode3\n");
  EXPECT_EQ(NodeJson(c, "node1")["state"], "idle");
  EXPECT_EQ(NodeJson(c, "node2")["state"], "drained");
  EXPECT_EQ(NodeJson(c, "node2")["reason"], "bad dimm");
  EXPECT_EQ(NodeJson(c, "node3")["state"], "drained");
  EXPECT_EQ(NodeJson(c, "node3")["reason"], "rolling maintenance");

  r = c.Run({"resume", "node[2-3]"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(c.WaitNodes("idle", 3, 2));
  r = c.Run({"drain", "node1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "--reason")) << r.err;
  r = c.Run({"drain", "node1", "--reason", "fan"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(NodeJson(c, "node1")["reason"], "fan");
  // SIGTERM (here from the hook itself) stops after the current step: the exec ends, its batch
  // stays drained, and nothing more is changed.
  r = c.Run({"drain", "--rolling", "node[2-3]", "--interval", "0.2", "--exec",
             "kill -TERM $PPID; sleep 0.5; echo $LOCKSTEP_NODES >> term.log"});
  EXPECT_EQ(r.exit_code, 143) << r.out << r.err;
  EXPECT_EQ(c.ReadFile("term.log"), "node2\n");
  EXPECT_TRUE(Contains(r.out, "interrupted (SIGTERM): stopped in batch 1 of 2 (node2)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "left drained: node2")) << r.out;
  EXPECT_EQ(NodeJson(c, "node2")["state"], "drained");
  EXPECT_EQ(NodeJson(c, "node3")["state"], "idle");
  r = c.Run({"resume", "node2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = c.Run({"drain", "--rolling", "node[1-3]", "--dry-run", "--batch", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "batch 2: node3")) << r.out;
  EXPECT_EQ(NodeJson(c, "node3")["state"], "idle");
}

// --reservation: the maintenance waits for the window (lockstepd's clock says when it is in
// force), takes the reservation's nodes when none are named, and refuses nodes outside it.
TEST(Drain, RollingInAReservationsWindow) {
  ClusterOptions o;
  o.nodes = 3;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "create", "reservation", "ReservationName=fw",
                           "StartTime=now+2", "Duration=10", "Nodes=node[1-2]",
                           "Flags=MAINT", "Users=root"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = c.Run({"drain", "--rolling", "--reservation", "fw", "node3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "node3 is not in reservation fw")) << r.err;
  r = c.Run({"drain", "--rolling", "--reservation", "nosuch"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "no reservation nosuch")) << r.err;

  r = c.Run({"drain", "--rolling", "--reservation", "fw", "--interval", "0.1", "--exec",
             "echo $LOCKSTEP_NODES >> maint.log"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "waiting for reservation fw to start")) << r.out;
  EXPECT_TRUE(Contains(r.out, "reservation fw is in force")) << r.out;
  EXPECT_EQ(Lines(c.ReadFile(c.work() + "/maint.log")),
            (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(NodeJson(c, "node3")["state"], "idle");  // never touched
}

}  // namespace
}  // namespace lockstep::testing
