// The admission policy end to end on bare hosts (docs/policy.md): a group's GPU cap refuses its
// users' sbatch and not another group's, scontrol update cannot get around a rule, every decision
// is an audit line that operators read and others cannot, `lockstep policy test` says what
// would happen, /metrics counts denials, and a changed file takes effect without a restart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

constexpr int kAlice = 65534;  // "nobody" on the host: alice in the users file, group ml
constexpr int kBob = 1;        // "daemon" on the host: bob, group physics

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class Admission : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lockstep-policy-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    std::ofstream(dir_ + "/users.yaml")
        << "groups:\n  - {name: ml, gid: 3000}\n  - {name: physics, gid: 3001}\n"
           "users:\n  - {name: root, uid: 0, gid: 0}\n"
           "  - {name: alice, uid: 65534, gid: 65534, groups: [ml]}\n"
           "  - {name: bob, uid: 1, gid: 1, groups: [physics]}\n";
    WritePolicy(2);
    ClusterOptions o;
    o.extra_yaml = "identity:\n  users_file: " + dir_ + "/users.yaml\n"
                   "admission:\n  policy_file: " + dir_ + "/policy.yaml\n  reload_period: 1\n";
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  void TearDown() override {
    cluster_.reset();
    std::filesystem::remove_all(dir_);
  }
  void WritePolicy(int gpu_cap) {
    std::ofstream(dir_ + "/policy.yaml.new")
        << "rules:\n  - name: ml-gpu-cap\n    message: the ml group may use at most "
        << gpu_cap << " GPUs per job\n    match: {groups: [ml]}\n"
        << "    limits: {gpus_per_job: " << gpu_cap << ", time: \"1:00:00\"}\n";
    std::filesystem::rename(dir_ + "/policy.yaml.new", dir_ + "/policy.yaml");
  }
  CommandResult Sbatch(int uid, std::vector<std::string> options) {
    std::vector<std::string> args = {"sbatch", "--parsable", "-H"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--wrap", "true"});
    return cluster_->Run(args, "/tmp", uid);
  }

  std::string dir_;
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(Admission, AGroupsGpuCapRefusesItsUserAndNotAnotherGroups) {
  Cluster& c = *cluster_;
  CommandResult r = Sbatch(kAlice, {"--gpus=4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "sbatch: error: Batch job submission failed: policy rule "
                              "'ml-gpu-cap': the ml group may use at most 2 GPUs per job: at "
                              "most 2 GPUs per job (asked for 4)")) << r.err;
  EXPECT_TRUE(r.out.empty());
  // Nothing was queued for the refusal.
  EXPECT_EQ(c.Get("/api/v1/jobs")["jobs"].size(), 0u);
  r = Sbatch(kBob, {"--gpus=4"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Sbatch(kAlice, {"--gpus=2", "-t", "30"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // srun and salloc go through the same gate.
  r = c.Run({"srun", "--gpus=4", "true"}, "/tmp", kAlice);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "policy rule 'ml-gpu-cap'")) << r.err;
  // Without -t the partition's limit (UNLIMITED here) is what is asked: over the 1-hour rule.
  r = c.Run({"sbatch", "--parsable", "-H", "--wrap", "true"}, "/tmp", kAlice);
  EXPECT_TRUE(Contains(r.err, "a time limit of at most 1:00:00 (asked for UNLIMITED)")) << r.err;
}

TEST_F(Admission, AnUpdateCannotGetAroundARule) {
  Cluster& c = *cluster_;
  CommandResult r = Sbatch(kAlice, {"-t", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = r.out.substr(0, r.out.find('\n'));
  // Even an operator's change is judged as the job's owner's.
  r = c.Run({"scontrol", "update", "JobId=" + id, "TimeLimit=2:00:00"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "policy rule 'ml-gpu-cap'")) << r.err;
  EXPECT_EQ(c.Job(std::stoull(id))["time_limit"], 30 * 60);
  r = c.Run({"scontrol", "update", "JobId=" + id, "TimeLimit=45:00"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(std::stoull(id))["time_limit"], 45 * 60);
}

TEST_F(Admission, EveryDecisionIsLoggedForOperatorsOnly) {
  Cluster& c = *cluster_;
  ASSERT_EQ(Sbatch(kAlice, {"--gpus=4"}).exit_code, 1);
  ASSERT_EQ(Sbatch(kBob, {"--gpus=4", "-t", "10"}).exit_code, 0);
  CommandResult r = c.Run({"policy", "log", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  for (std::size_t at = 0; at < r.out.size();) {
    const std::size_t nl = r.out.find('\n', at);
    lines.push_back(nlohmann::json::parse(r.out.substr(at, nl - at)));
    at = nl + 1;
  }
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["user"], "alice");
  EXPECT_EQ(lines[0]["verdict"], "deny");
  EXPECT_EQ(lines[0]["rule"], "ml-gpu-cap");
  EXPECT_EQ(lines[0]["asked"]["gpus"], 4);
  EXPECT_EQ(lines[1]["user"], "bob");
  EXPECT_EQ(lines[1]["verdict"], "allow");
  // Not for alice: the route refuses, and the file is lockstepd's alone.
  r = c.Run({"policy", "log"}, "/tmp", kAlice);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "operators only")) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat((c.dir() + "/audit.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  // Nor may she change the rules.
  ASSERT_EQ(::stat((dir_ + "/policy.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0022, 0u);
  // Denials are counted.
  r = c.Run({"metrics"});
  EXPECT_TRUE(Contains(r.out, "lockstep_policy_decisions_total{kind=\"job\",verdict=\"deny\",rule=\"ml-gpu-cap\"} 1"))
      << r.out.substr(0, 400);
}

TEST_F(Admission, PolicyTestSaysWhatWouldHappenAndSubmitsNothing) {
  Cluster& c = *cluster_;
  CommandResult r = c.Run({"policy", "test", "--as", "alice", "--", "sbatch", "--gpus=4", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "denied: job of alice")) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "policy rule 'ml-gpu-cap'")) << r.out;
  r = c.Run({"policy", "test", "--as", "bob", "--", "sbatch", "--gpus=4", "-t", "5", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "allowed: job of bob")) << r.out;
  EXPECT_EQ(c.Get("/api/v1/jobs")["jobs"].size(), 0u);
  // A user asks for themselves only.
  r = c.Run({"policy", "test", "--as", "bob", "--", "sbatch", "--wrap", "true"}, "/tmp", kAlice);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "only an operator")) << r.err;
  r = c.Run({"policy", "test", "--", "sbatch", "--gpus=3", "-t", "5", "--wrap", "true"}, "/tmp", kAlice);
  EXPECT_TRUE(Contains(r.out, "denied: job of alice")) << r.out << r.err;
}

TEST_F(Admission, AChangedPolicyFileTakesEffectAndABrokenOneChangesNothing) {
  Cluster& c = *cluster_;
  auto verdict = [&] {
    CommandResult r = c.Run({"policy", "test", "--as", "alice", "--", "sbatch", "--gpus=4", "-t", "5", "--wrap", "true"});
    return r.out.substr(0, r.out.find(':'));
  };
  ASSERT_EQ(verdict(), "denied");
  std::ofstream(dir_ + "/policy.yaml") << "rules:\n  - name: broken\n    limits: {gpus_per_job: x}\n";
  // The broken file is logged and the old rules stay (the log line is the sign it was read).
  ASSERT_TRUE(WaitFor([&] { return Contains(c.ReadFile(c.dir() + "/lockstepd.log"), "rules[0] (broken)"); },
                      std::chrono::seconds(20)));
  EXPECT_EQ(verdict(), "denied");
  WritePolicy(8);
  EXPECT_TRUE(WaitFor([&] { return verdict() == "allowed"; }, std::chrono::seconds(20)));
}

TEST(AdmissionStart, ABadPolicyFileStopsLockstepdWithTheRuleNamed) {
  char tmpl[] = "/tmp/lockstep-policy-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::ofstream(dir + "/policy.yaml") << "rules:\n  - name: cap\n    limits: {gpus_per_job: -1}\n";
  {
    ClusterOptions o;
    o.extra_yaml = "admission:\n  policy_file: " + dir + "/policy.yaml\n";
    Cluster c(o);
    c.StartDaemon();
    std::optional<int> status;
    ASSERT_TRUE(WaitFor([&] { return (status = c.DaemonExited()).has_value(); }, std::chrono::seconds(20)));
    EXPECT_TRUE(Contains(c.ReadFile(c.dir() + "/lockstepd.log"),
                         dir + "/policy.yaml:3: rules[0] (cap).limits.gpus_per_job"));
  }
  // lockstep up checks it before anything starts.
  Cluster probe;
  CommandResult r = probe.Run({"up", "--state-dir", dir + "/state", "--policy", dir + "/policy.yaml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "--policy: " + dir + "/policy.yaml:3: rules[0] (cap)")) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::testing
