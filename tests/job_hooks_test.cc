// Prolog and Epilog end to end (docs/health.md): a real lockstepd and lockstep-agent run the
// cluster YAML's `prolog:` and `epilog:` on each node of a job, drain a node whose program
// fails, and requeue a job whose prolog failed elsewhere.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using std::chrono::seconds;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class JobHooksTest : public ::testing::Test {
 protected:
  JobHooksTest() {
    char tmpl[] = "/tmp/lockstep-hooks-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    ::chmod(dir_.c_str(), 0777);
  }
  ~JobHooksTest() override {
    cluster_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // An executable script in the test's directory.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path;
  }
  void StartCluster(const std::string& yaml) {
    ClusterOptions o;
    o.nodes = 2;
    o.gpus_per_node = 4;
    o.extra_yaml = yaml;
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  nlohmann::json Node(const std::string& name) {
    for (const auto& n : cluster_->Get("/api/v1/nodes").value("nodes", nlohmann::json::array()))
      if (n["name"] == name) return n;
    return {};
  }
  bool WaitDrained(const std::string& name) {
    return WaitFor([&] { return Contains(Node(name).value("state", ""), "drain"); }, seconds(20));
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;  // the programs and what they write
  std::unique_ptr<Cluster> cluster_;
};

// What a hook writes: its context, node and the job's variables, one file per node and job.
constexpr const char* kRecordEnv =
    "f=$HOOKS_DIR/$SLURM_SCRIPT_CONTEXT-$SLURMD_NODENAME-$SLURM_JOB_ID\n"
    "echo \"job=$SLURM_JOB_ID user=$SLURM_JOB_USER uid=$SLURM_JOB_UID "
    "nodelist=$SLURM_JOB_NODELIST gpus=$SLURM_JOB_GPUS restart=$SLURM_RESTART_COUNT\" > $f.tmp\n"
    "mv $f.tmp $f\n";

// The prolog runs on each node of a job before its tasks there (the batch script on the first,
// an srun step on the second) with the job's SLURM_* variables, and the epilog on each node
// after the job ended; the job completes.
TEST_F(JobHooksTest, PrologAndEpilogRunOnEveryNodeWithTheJobsVariables) {
  const std::string vars = std::string("HOOKS_DIR=") + dir_ + "\n" + kRecordEnv;
  const std::string prolog = Script("prolog.sh", vars);
  const std::string epilog = Script("epilog.sh", vars);
  StartCluster("prolog: " + prolog + "\nepilog:\n  program: " + epilog + "\n  timeout: 30\n");
  // The batch script sees its node's prolog done; the step on the other node too.
  const std::string check = "test -f " + dir_ + "/prolog_slurmd-$SLURMD_NODENAME-$SLURM_JOB_ID";
  unsigned long long id = Submit(
      *cluster_, {"-N2", "--gpus-per-node=2", "-o", "job-%j.out", "--wrap",
                  check + " && echo batch-after-prolog; srun -N2 -n2 sh -c '" + check +
                      " && echo step-after-prolog-$SLURMD_NODENAME'"});
  ASSERT_NE(id, 0u);
  nlohmann::json j = cluster_->WaitJob(id, 60);
  EXPECT_EQ(j.value("state", ""), "COMPLETED") << j.dump();
  const std::string out = cluster_->ReadFile("job-" + std::to_string(id) + ".out");
  EXPECT_TRUE(Contains(out, "batch-after-prolog")) << out;
  EXPECT_TRUE(Contains(out, "step-after-prolog-node1")) << out;
  EXPECT_TRUE(Contains(out, "step-after-prolog-node2")) << out;
  const std::string job = std::to_string(id);
  const std::string user_uid = "uid=" + std::to_string(::getuid());
  for (const char* node : {"node1", "node2"}) {
    const std::string p = Read(dir_ + "/prolog_slurmd-" + node + "-" + job);
    EXPECT_TRUE(Contains(p, "job=" + job)) << p;
    EXPECT_TRUE(Contains(p, user_uid)) << p;
    EXPECT_TRUE(Contains(p, "nodelist=node[1-2]")) << p;
    EXPECT_TRUE(Contains(p, "gpus=0,1")) << p;
    EXPECT_TRUE(Contains(p, "restart=0")) << p;
    // The epilog comes after the job's end: wait for it.
    const std::string e = dir_ + "/epilog_slurmd-" + node + "-" + job;
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(e); }, seconds(20))) << e;
    EXPECT_TRUE(Contains(Read(e), "job=" + job + " user=")) << Read(e);
  }
  EXPECT_EQ(Node("node1").value("state", ""), "idle");
}

// A prolog that fails drains its node with a reason naming the prolog, and the job goes back to
// the queue at once and runs on the other node, with cause `node` and the prolog's evidence.
TEST_F(JobHooksTest, AFailingPrologDrainsTheNodeAndRequeuesTheJobElsewhere) {
  // Fails the first time it runs, wherever that is.
  const std::string prolog = Script(
      "prolog.sh", "if mkdir " + dir_ + "/failed-once 2>/dev/null; then echo no scratch; exit 7; fi\n");
  StartCluster("prolog:\n  program: " + prolog + "\n  timeout: 30\n");
  unsigned long long id = Submit(*cluster_, {"-N1", "-o", "job-%j.out", "--wrap",
                                             "echo ran on $SLURMD_NODENAME; sleep 300"});
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(WaitFor(
      [&] {
        nlohmann::json j = cluster_->Job(id);
        return j.value("state", "") == "RUNNING" && j.value("restart_count", 0) == 1;
      },
      seconds(30)));
  nlohmann::json j = cluster_->Job(id);
  const std::string second = j["nodes"];
  const std::string first = second == "node1" ? "node2" : "node1";
  ASSERT_TRUE(WaitDrained(first));
  const std::string reason = Node(first).value("reason", "");
  EXPECT_TRUE(Contains(reason, "prolog " + prolog + " failed: exit 7")) << reason;
  ASSERT_TRUE(j["failure"].is_object()) << j.dump();
  EXPECT_EQ(j["failure"]["cause"], "node");
  EXPECT_TRUE(Contains(j["failure"]["detail"], "prolog failed: exit 7: no scratch on " + first))
      << j["failure"].dump();
  EXPECT_TRUE(WaitFor([&] { return Contains(cluster_->ReadFile("job-" + std::to_string(id) +
                                                               ".out"),
                                            "ran on " + second); },
                      seconds(20)));
  CommandResult why = cluster_->Run({"why", std::to_string(id)});
  EXPECT_TRUE(Contains(why.out, "node: prolog failed: exit 7")) << why.out;
  // The operator's resume puts the node back, as after any drain.
  CommandResult resume =
      cluster_->Run({"scontrol", "update", "NodeName=" + first, "State=RESUME"});
  EXPECT_EQ(resume.exit_code, 0) << resume.err;
  EXPECT_TRUE(WaitFor([&] { return Node(first).value("state", "") == "idle"; }, seconds(20)));
  EXPECT_EQ(cluster_->Run({"scancel", std::to_string(id)}).exit_code, 0);
}

// A prolog that outlives its timeout fails too; an epilog that fails drains its node, and the
// job that ran before it stays COMPLETED.
TEST_F(JobHooksTest, APrologTimeoutAndAFailingEpilogDrainTheirNodes) {
  const std::string prolog = Script(
      "prolog.sh", "if mkdir " + dir_ + "/slow-once 2>/dev/null; then exec sleep 60; fi\n");
  const std::string epilog = Script(
      "epilog.sh", "if [ -f " + dir_ + "/epilog-fails ]; then echo cannot clean; exit 3; fi\n");
  StartCluster("prolog:\n  program: " + prolog + "\n  timeout: 1\nepilog: " + epilog + "\n");
  unsigned long long id = Submit(*cluster_, {"-N1", "-o", "job-%j.out", "--wrap", "true"});
  ASSERT_NE(id, 0u);
  nlohmann::json j = cluster_->WaitJob(id, 60);
  EXPECT_EQ(j.value("state", ""), "COMPLETED") << j.dump();
  EXPECT_EQ(j.value("restart_count", 0), 1);
  std::string timed_out;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const char* n : {"node1", "node2"})
          if (Contains(Node(n).value("reason", ""), "timed out after 1 s")) timed_out = n;
        return !timed_out.empty();
      },
      seconds(20)));
  const std::string other = timed_out == "node1" ? "node2" : "node1";
  std::ofstream(dir_ + "/epilog-fails") << "";
  unsigned long long second = Submit(*cluster_, {"-N1", "-w", other, "--wrap", "true"});
  ASSERT_NE(second, 0u);
  j = cluster_->WaitJob(second, 60);
  EXPECT_EQ(j.value("state", ""), "COMPLETED") << j.dump();
  ASSERT_TRUE(WaitDrained(other));
  const std::string reason = Node(other).value("reason", "");
  EXPECT_TRUE(Contains(reason, "epilog " + epilog + " failed: exit 3: cannot clean")) << reason;
  EXPECT_EQ(cluster_->Job(second).value("state", ""), "COMPLETED");
}

}  // namespace
}  // namespace lockstep::testing
