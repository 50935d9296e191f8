// Fleet health end to end (docs/health.md): real lockstepd, one lockstep-agent per node that
// loads a fake NVML (tests/fake_nvml) through LD_LIBRARY_PATH, the site's health program, and
// the CLI as operators and users run it.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using std::chrono::seconds;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The GPUs one fake NVML shows: written to its state file whole, by rename, on every change.
class FakeGpus {
 public:
  FakeGpus(std::string path, const std::string& serial_prefix, int count = 4)
      : path_(std::move(path)) {
    state_ = {{"gpus", nlohmann::json::array()}, {"xids", nlohmann::json::array()}};
    for (int g = 0; g < count; ++g)
      state_["gpus"].push_back({{"uuid", "GPU-" + serial_prefix + std::to_string(g)},
                                {"serial", serial_prefix + std::to_string(g)},
                                {"name", "NVIDIA H100 80GB HBM3"}});
    Write();
  }
  void Xid(int gpu, int xid) {
    state_["xids"].push_back({{"gpu", gpu}, {"xid", xid}});
    Write();
  }
  void SetSerial(int gpu, const std::string& serial) {
    state_["gpus"][gpu]["serial"] = serial;
    state_["gpus"][gpu]["uuid"] = "GPU-" + serial;
    Write();
  }
  void SetPresent(int gpu, bool present) {
    state_["gpus"][gpu]["present"] = present;
    Write();
  }
  const std::string& path() const { return path_; }
  std::string serial(int gpu) const { return state_["gpus"][gpu]["serial"]; }

 private:
  void Write() {
    std::ofstream(path_ + ".tmp") << state_.dump();
    std::filesystem::rename(path_ + ".tmp", path_);
  }
  std::string path_;
  nlohmann::json state_;
};

class HealthTest : public ::testing::Test {
 protected:
  // Two nodes of 4 GPUs, each served by an agent of its own that sees its GPUs through NVML.
  void StartCluster(const std::string& health_yaml) {
    ClusterOptions o;
    o.nodes = 2;
    o.gpus_per_node = 4;
    o.extra_yaml = "health:\n  interval: 1\n  timeout: 5\n" + health_yaml;
    cluster_ = std::make_unique<Cluster>(o);
    for (const char* node : {"node1", "node2"})
      gpus_.emplace(node, FakeGpus(cluster_->dir() + "/nvml-" + node + ".json",
                                   std::string("16500") + node[4] + "00"));
    cluster_->Start(/*with_agent=*/false);
    for (const char* node : {"node1", "node2"}) StartAgent(node);
    ASSERT_TRUE(cluster_->WaitNodes("idle", 2)) << "agents with the fake NVML registered";
  }
  void StartAgent(const std::string& node) {
    cluster_->StartNodeAgent(node, {{"LD_LIBRARY_PATH", LOCKSTEP_FAKE_NVML_DIR},
                                    {"LOCKSTEP_FAKE_NVML", gpus_.at(node).path()}});
  }
  nlohmann::json Node(const std::string& name) {
    for (const auto& n : cluster_->Get("/api/v1/nodes").value("nodes", nlohmann::json::array()))
      if (n["name"] == name) return n;
    return {};
  }
  bool WaitNode(const std::string& name, const std::function<bool(const nlohmann::json&)>& ok) {
    return WaitFor([&] { return ok(Node(name)); }, seconds(20));
  }
  // The health report's entry of a node or a GPU (by serial).
  nlohmann::json HealthOf(const char* list, const std::string& key_field, const std::string& key) {
    for (const auto& x : cluster_->Get("/api/v1/health").value(list, nlohmann::json::array()))
      if (x.value(key_field, "") == key) return x;
    return {};
  }
  std::uint64_t Reports(const std::string& node) {
    return HealthOf("nodes", "name", node).value("reports", std::uint64_t{0});
  }
  void WaitRounds(const std::string& node, int rounds) {
    const std::uint64_t from = Reports(node);
    ASSERT_TRUE(WaitFor([&] { return Reports(node) >= from + rounds; }, seconds(20)));
  }
  // The program every node runs: critical with the text of health-NODE while that file exists.
  std::string WriteProgram() {
    const std::string path = cluster_dir_hint_ + "/check.sh";
    std::ofstream(path) << "#!/bin/sh\nf=" << cluster_dir_hint_
                        << "/health-$SLURMD_NODENAME\n"
                           "if [ -f \"$f\" ]; then cat \"$f\"; exit 2; fi\necho healthy\nexit 0\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }

  HealthTest() {
    char tmpl[] = "/tmp/lockstep-health-XXXXXX";
    cluster_dir_hint_ = ::mkdtemp(tmpl);
    ::chmod(cluster_dir_hint_.c_str(), 0755);
  }
  ~HealthTest() override {
    cluster_.reset();
    std::error_code ec;
    std::filesystem::remove_all(cluster_dir_hint_, ec);
  }

  std::unique_ptr<Cluster> cluster_;
  std::map<std::string, FakeGpus> gpus_;
  std::string cluster_dir_hint_;  // the health program and its files, outside the cluster's
};

// XID 79 on a busy GPU: the node drains at once with a reason naming the GPU, its serial and
// the XID; the job ends with cause `gpu` and is requeued on the other node, where it sees
// SLURM_RESTART_COUNT=1.
TEST_F(HealthTest, Xid79OnABusyGpuDrainsTheNodeAndRequeuesTheJobElsewhere) {
  StartCluster("");
  unsigned long long id = Submit(*cluster_, {"-N1", "--gpus-per-node=4", "-o", "job-%j.out",
                                             "--wrap", "echo restart=$SLURM_RESTART_COUNT "
                                                       "node=$SLURMD_NODENAME; sleep 300"});
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return cluster_->Job(id).value("state", "") == "RUNNING"; },
                      seconds(20)));
  const std::string first = cluster_->Job(id)["nodes"];
  const std::string other = first == "node1" ? "node2" : "node1";
  gpus_.at(first).Xid(3, 79);
  ASSERT_TRUE(WaitNode(first, [](const nlohmann::json& n) {
    return Contains(n.value("state", ""), "drain");
  }));
  const std::string reason = Node(first)["reason"];
  EXPECT_TRUE(Contains(reason, "health: GPU 3 serial " + gpus_.at(first).serial(3) +
                                   " XID 79 (fell off the bus)"))
      << reason;
  ASSERT_TRUE(WaitFor(
      [&] {
        nlohmann::json j = cluster_->Job(id);
        return j.value("state", "") == "RUNNING" && j.value("nodes", "") == other;
      },
      seconds(20)));
  nlohmann::json j = cluster_->Job(id);
  EXPECT_EQ(j["restart_count"], 1);
  ASSERT_TRUE(j["failure"].is_object());
  EXPECT_EQ(j["failure"]["cause"], "gpu");
  EXPECT_TRUE(Contains(j["failure"]["detail"], "serial " + gpus_.at(first).serial(3)));
  EXPECT_TRUE(WaitFor([&] { return Contains(cluster_->ReadFile("job-" + std::to_string(id) +
                                                               ".out"),
                                            "restart=1 node=" + other); },
                      seconds(20)));
  CommandResult sacct = cluster_->Run({"sacct", "-j", std::to_string(id), "-n", "-P", "-o",
                                       "JobID,FailureCause"});
  EXPECT_TRUE(Contains(sacct.out, std::to_string(id) + "|gpu")) << sacct.out << sacct.err;
  CommandResult why = cluster_->Run({"why", std::to_string(id)});
  EXPECT_TRUE(Contains(why.out, "gpu: GPU 3 serial")) << why.out;
  CommandResult show = cluster_->Run({"scontrol", "show", "job", std::to_string(id)});
  EXPECT_TRUE(Contains(show.out, "FailureCause=gpu")) << show.out;
  // The event stream says why the first run ended (docs/observability.md).
  CommandResult events = cluster_->Run({"events", "--json"});
  bool requeued_for_gpu = false;
  std::size_t start = 0;
  for (std::size_t nl; (nl = events.out.find('\n', start)) != std::string::npos; start = nl + 1) {
    nlohmann::json e = nlohmann::json::parse(events.out.substr(start, nl - start), nullptr, false);
    if (e.is_object() && e.value("job_id", 0ull) == id && e.value("kind", "") == "requeued" &&
        e.value("cause", "") == "gpu")
      requeued_for_gpu = Contains(e.value("cause_detail", ""), "XID 79");
  }
  EXPECT_TRUE(requeued_for_gpu) << events.out << events.err;
  cluster_->Run({"scancel", std::to_string(id)});
}

// XID 13 is the application's own error: no drain, and the job's failure is `user`, with the
// XID as evidence.
TEST_F(HealthTest, Xid13BlamesTheJobAndDrainsNothing) {
  StartCluster("");
  const std::string go = cluster_->work() + "/go";
  unsigned long long id = Submit(
      *cluster_, {"-N1", "--gpus-per-node=1", "-o", "x13.out", "--wrap",
                  "echo gpus=$CUDA_VISIBLE_DEVICES; while [ ! -f " + go +
                      " ]; do sleep 0.1; done; exit 3"});
  ASSERT_NE(id, 0u);
  std::string out;
  ASSERT_TRUE(WaitFor([&] { return Contains(out = cluster_->ReadFile("x13.out"), "\n"); },
                      seconds(20)));
  const int gpu = std::stoi(out.substr(out.find('=') + 1));
  const std::string node = cluster_->Job(id)["nodes"];
  gpus_.at(node).Xid(gpu, 13);
  ASSERT_TRUE(WaitFor([&] { return cluster_->Job(id).contains("health_evidence"); }, seconds(20)));
  std::ofstream(go) << "";
  nlohmann::json j = cluster_->WaitJob(id);
  EXPECT_EQ(j["state"], "FAILED");
  ASSERT_TRUE(j["failure"].is_object()) << j.dump();
  EXPECT_EQ(j["failure"]["cause"], "user");
  EXPECT_TRUE(Contains(j["failure"]["detail"], "exit code 3")) << j["failure"].dump();
  EXPECT_TRUE(Contains(j["failure"]["detail"], "XID 13")) << j["failure"].dump();
  EXPECT_EQ(Node(node)["state"], "idle") << "an application XID drains nothing";
}

// The site's health program: exit 2 drains with its first line as the reason, exit 0 resumes
// the node the checker drained; a drain an operator set is never cleared by passing checks.
TEST_F(HealthTest, AHealthProgramDrainsAndResumesButNeverClearsAnOperatorsDrain) {
  const std::string program = WriteProgram();
  StartCluster("  program: " + program + "\n");
  std::ofstream(cluster_dir_hint_ + "/health-node1") << "disk /scratch full\nmore detail\n";
  ASSERT_TRUE(WaitNode("node1", [](const nlohmann::json& n) {
    return n.value("state", "") == "drained";
  }));
  EXPECT_EQ(Node("node1")["reason"], "health: disk /scratch full");
  CommandResult sinfo = cluster_->Run({"sinfo", "-R", "-h", "-o", "%E|%N"});
  EXPECT_TRUE(Contains(sinfo.out, "health: disk /scratch full|node1")) << sinfo.out;
  std::filesystem::remove(cluster_dir_hint_ + "/health-node1");
  ASSERT_TRUE(WaitNode("node1", [](const nlohmann::json& n) {
    return n.value("state", "") == "idle";
  })) << "the checker resumes the node it drained";
  EXPECT_EQ(Node("node1").value("reason", ""), "");

  // node2: drained by the checker, then by an operator, who owns it from then on.
  std::ofstream(cluster_dir_hint_ + "/health-node2") << "fan failure\n";
  ASSERT_TRUE(WaitNode("node2", [](const nlohmann::json& n) {
    return n.value("state", "") == "drained";
  }));
  CommandResult drain = cluster_->Run(
      {"scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=replacing fan"});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  std::filesystem::remove(cluster_dir_hint_ + "/health-node2");
  WaitRounds("node2", 3);
  EXPECT_EQ(Node("node2")["state"], "drained");
  EXPECT_EQ(Node("node2")["reason"], "replacing fan") << "passing checks leave it drained";
  EXPECT_TRUE(HealthOf("nodes", "name", "node2")["conditions"].empty());
}

// A GPU fallen off the bus (NVML counts fewer than configured) drains; back, it resumes.
TEST_F(HealthTest, AMissingGpuDrainsTheNodeUntilItIsBack) {
  StartCluster("");
  gpus_.at("node2").SetPresent(2, false);
  ASSERT_TRUE(WaitNode("node2", [](const nlohmann::json& n) {
    return n.value("state", "") == "drained";
  }));
  EXPECT_EQ(Node("node2")["reason"], "health: NVML sees 3 of 4 GPUs");
  gpus_.at("node2").SetPresent(2, true);
  ASSERT_TRUE(WaitNode("node2", [](const nlohmann::json& n) {
    return n.value("state", "") == "idle";
  }));
}

// A GPU's failures are recorded against its serial: moved to another host, it keeps them.
TEST_F(HealthTest, AGpusHistoryFollowsItsSerialToAnotherHost) {
  StartCluster("");
  const std::string serial = gpus_.at("node1").serial(0);
  gpus_.at("node1").Xid(0, 48);
  ASSERT_TRUE(WaitFor(
      [&] { return HealthOf("gpus", "serial", serial)["failures"].size() == 1; }, seconds(20)));
  // The board moves: node1's agent goes, node2 comes back with it in slot 1.
  cluster_->StopNodeAgent("node1");
  cluster_->StopNodeAgent("node2");
  gpus_.at("node2").SetSerial(1, serial);
  StartAgent("node2");
  ASSERT_TRUE(WaitFor([&] { return HealthOf("gpus", "serial", serial).value("host", "") ==
                                   "node2"; },
                      seconds(20)));
  nlohmann::json gpu = HealthOf("gpus", "serial", serial);
  EXPECT_EQ(gpu["hosts"], nlohmann::json({"node1", "node2"}));
  EXPECT_EQ(gpu["index"], 1);
  ASSERT_EQ(gpu["failures"].size(), 1u);
  EXPECT_EQ(gpu["failures"][0]["host"], "node1");
  EXPECT_TRUE(Contains(gpu["failures"][0]["what"], "XID 48"));
  CommandResult health = cluster_->Run({"health", "--history"});
  EXPECT_TRUE(Contains(health.out, "seen in node1,node2")) << health.out;
  EXPECT_TRUE(Contains(health.out, serial)) << health.out;
}

// Three failures of one GPU within the window make it a bad actor: its node stays drained,
// whatever the checks say, until an operator clears it.
TEST_F(HealthTest, ThreeFailuresInTheWindowExcludeTheGpuUntilCleared) {
  // XIDs alone drain only at 100 in an hour here: the exclusion is what drains.
  StartCluster(
      "  thresholds:\n    xid: {count: 100, window: 3600}\n"
      "  bad_gpu: {count: 3, window: 3600}\n");
  const std::string serial = gpus_.at("node1").serial(1);
  gpus_.at("node1").Xid(1, 94);
  gpus_.at("node1").Xid(1, 94);
  ASSERT_TRUE(WaitFor(
      [&] { return HealthOf("gpus", "serial", serial)["failures"].size() == 2; }, seconds(20)));
  EXPECT_FALSE(HealthOf("gpus", "serial", serial)["excluded"].get<bool>());
  EXPECT_EQ(Node("node1")["state"], "idle") << "two failures are under the threshold";
  gpus_.at("node1").Xid(1, 94);
  ASSERT_TRUE(WaitNode("node1", [](const nlohmann::json& n) {
    return n.value("state", "") == "drained";
  }));
  EXPECT_TRUE(Contains(Node("node1")["reason"], "serial " + serial + " excluded"));
  WaitRounds("node1", 2);
  EXPECT_EQ(Node("node1")["state"], "drained") << "passing rounds keep a bad actor out";
  CommandResult list = cluster_->Run({"health"});
  EXPECT_TRUE(Contains(list.out, serial)) << list.out;
  EXPECT_TRUE(Contains(list.out, "EXCLUDED")) << list.out;
  CommandResult json = cluster_->Run({"health", "--json"});
  EXPECT_EQ(nlohmann::json::parse(json.out)["gpus"][0]["serial"], serial) << "worst first";
  CommandResult clear = cluster_->Run({"health", "--clear", serial});
  ASSERT_EQ(clear.exit_code, 0) << clear.err;
  ASSERT_TRUE(WaitNode("node1", [](const nlohmann::json& n) {
    return n.value("state", "") == "idle";
  }));
  EXPECT_FALSE(HealthOf("gpus", "serial", serial)["excluded"].get<bool>());
  CommandResult unknown = cluster_->Run({"health", "--clear", "no-such-gpu"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(Contains(unknown.err, "no-such-gpu")) << unknown.err;
}

// A gang (one job on two nodes) that loses a GPU on one node is requeued whole: its share on
// the healthy node ends too, and it waits for two usable nodes again.
TEST_F(HealthTest, AGangThatLosesOneNodesGpuIsRequeuedWhole) {
  StartCluster("");
  unsigned long long id = Submit(*cluster_, {"-N2", "--gpus-per-node=4", "--wrap", "sleep 300"});
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return cluster_->Job(id).value("state", "") == "RUNNING"; },
                      seconds(20)));
  gpus_.at("node2").Xid(0, 74);
  ASSERT_TRUE(WaitFor(
      [&] {
        nlohmann::json j = cluster_->Job(id);
        return j.value("state", "") == "PENDING" && j.value("restart_count", 0) == 1;
      },
      seconds(20)));
  nlohmann::json j = cluster_->Job(id);
  EXPECT_EQ(j["failure"]["cause"], "gpu");
  EXPECT_TRUE(Contains(j["failure"]["detail"], "XID 74 (NVLink error) on node2"))
      << j["failure"].dump();
  EXPECT_TRUE(WaitNode("node1", [](const nlohmann::json& n) {
    return n.value("state", "") == "idle";
  })) << "the gang's share on the healthy node ended with it";
  EXPECT_EQ(Node("node2")["state"], "drained");
  cluster_->Run({"scancel", std::to_string(id)});
}

// MIG (issue 37): a node whose GPU 0 is cut into slices and whose GPU 1 is whole. A job on
// slices sees exactly them in CUDA_VISIBLE_DEVICES, by the UUIDs the node's NVML lists (matched
// by profile: NVML's order is not the YAML's); a job on the whole GPU sees its physical index;
// sinfo counts each type apart; the node is not drained for "fewer GPUs" (NVML counts 2).
TEST(MigTest, JobsSeeTheirSlicesByUuidAndSinfoCountsEachType) {
  ClusterOptions o;
  o.nodes = 1;
  o.gpus_per_node = 2;
  o.node_yaml = "    mig:\n      - {gpu: 0, slices: [1g.10gb, 3g.40gb, 1g.10gb]}\n";
  o.extra_yaml = "health:\n  interval: 1\n";
  Cluster c(o);
  const nlohmann::json mig = nlohmann::json::array(
      {{{"uuid", "MIG-3g"}, {"profile", "3g.40gb"}},
       {{"uuid", "MIG-1g-a"}, {"profile", "1g.10gb"}},
       {{"uuid", "MIG-1g-b"}, {"profile", "1g.10gb"}}});
  const nlohmann::json state = {
      {"gpus",
       {{{"uuid", "GPU-a"}, {"serial", "1"}, {"name", "NVIDIA A100-SXM4-80GB"}, {"mig", mig}},
        {{"uuid", "GPU-b"}, {"serial", "2"}, {"name", "NVIDIA A100-SXM4-80GB"}}}},
      {"xids", nlohmann::json::array()}};
  const std::string nvml = c.dir() + "/nvml.json";
  std::ofstream(nvml) << state.dump();
  c.Start(/*with_agent=*/false);
  c.StartNodeAgent("node1", {{"LD_LIBRARY_PATH", LOCKSTEP_FAKE_NVML_DIR},
                             {"LOCKSTEP_FAKE_NVML", nvml}});
  ASSERT_TRUE(c.WaitNodes("idle", 1));
  EXPECT_EQ(c.Run({"sinfo", "-N", "-h", "-o", "%N %G"}).out,
            "node1 gpu:virtual_1g.10gb:2,gpu:virtual_3g.40gb:1,gpu:virtual:1\n");
  std::map<std::string, unsigned long long> jobs;
  for (const char* gres : {"gpu:virtual_1g.10gb:2", "gpu:virtual_3g.40gb:1", "gpu:virtual:1"})
    jobs[gres] = Submit(c, {"--gres", gres, "--wrap", "echo $CUDA_VISIBLE_DEVICES"});
  const std::map<std::string, std::string> want = {{"gpu:virtual_1g.10gb:2", "MIG-1g-a,MIG-1g-b\n"},
                                                   {"gpu:virtual_3g.40gb:1", "MIG-3g\n"},
                                                   {"gpu:virtual:1", "1\n"}};
  for (const auto& [gres, id] : jobs) {
    ASSERT_GT(id, 0u) << gres;
    EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED") << gres;
    EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(id) + ".out"), want.at(gres)) << gres;
  }
  // The slice type is kept where a job's GPUs are shown: squeue %b, sacct's TRES.
  const std::string sliced = std::to_string(jobs.at("gpu:virtual_1g.10gb:2"));
  EXPECT_EQ(c.Run({"squeue", "-h", "-t", "all", "-j", sliced, "-o", "%b"}).out,
            "gres:gpu:virtual_1g.10gb:2\n");
  EXPECT_TRUE(Contains(c.Run({"sacct", "-n", "-X", "-P", "-j", sliced, "-o", "AllocTRES"}).out,
                       "gres/gpu:virtual_1g.10gb=2,gres/gpu=2"));
  // Rounds of the GPU checks have passed: NVML's two GPUs are what the node has.
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const auto& n : c.Get("/api/v1/health").value("nodes", nlohmann::json::array()))
          if (n.value("name", "") == "node1") return n.value("reports", 0) >= 2;
        return false;
      },
      seconds(20)));
  EXPECT_EQ(c.Run({"sinfo", "-N", "-h", "-o", "%T"}).out, "idle\n");
}

}  // namespace
}  // namespace lockstep::testing
