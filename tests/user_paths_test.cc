// Nothing done as root on a user's path, and one job never stops a node (issue 27), end to end
// with the real lockstepd, agent (as root) and CLI, the jobs of `nobody` playing the attacker:
// - a link planted in place of cores-<job> before a crash (`ln -s DIR cores-$SLURM_JOB_ID; kill
//   -SEGV $$`) leads nowhere: nothing is written into DIR;
// - a job that swaps every new cores-* directory for a link to root's file, while others crash
//   beside it, never gets that file moved, written or given away (the race, run many times);
// - `sbatch -o FIFO` holds only its own job: the agent goes on heartbeating and running other
//   jobs, and the job, cancelled, ends without ever running.
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

constexpr int kNobody = 65534;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string KernelCorePattern() {
  std::ifstream in("/proc/sys/kernel/core_pattern");
  std::string pattern;
  std::getline(in, pattern);
  return pattern;
}

// Processes of `uid` whose parent is `parent`, from /proc.
int ChildrenOf(pid_t parent, uid_t uid) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(entry.path() / "status");
    std::string line;
    long ppid = -1, owner = -1;
    while (std::getline(status, line)) {
      if (line.rfind("PPid:", 0) == 0) ppid = std::stol(line.substr(5));
      if (line.rfind("Uid:", 0) == 0) owner = std::stol(line.substr(4));
    }
    count += ppid == parent && owner == static_cast<long>(uid);
  }
  return count;
}

class UserPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root: the agent acts as root for other users";
  }
  void StartCluster(ClusterOptions o = {}) {
    o.extra_yaml += "health:\n  core_dumps: {max_size: 8M}\n";
    cluster_ = std::make_unique<Cluster>(o);
    ASSERT_TRUE(cluster_->Start());
  }
  // The kernel writes cores into the job's directory: else there is nothing to attack here.
  bool CoresLandInTheWorkingDirectory() {
    const std::string pattern = KernelCorePattern();
    return !pattern.empty() && pattern[0] != '|' && pattern[0] != '/';
  }
  unsigned long long SubmitAsNobody(const std::vector<std::string>& args) {
    std::vector<std::string> a = {"sbatch", "--parsable"};
    a.insert(a.end(), args.begin(), args.end());
    CommandResult r = cluster_->Run(a, "", kNobody);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoull(r.out) : 0;
  }
  // A directory and a file of root's, which nobody may not write.
  void MakeRootsFiles() {
    roots_dir_ = cluster_->dir() + "/roots-dir";
    roots_file_ = cluster_->dir() + "/roots-file";
    ASSERT_EQ(::mkdir(roots_dir_.c_str(), 0755), 0);
    std::ofstream(roots_file_) << "root's secret\n";
    ASSERT_EQ(::chmod(roots_file_.c_str(), 0600), 0);
    // nobody reaches them (so a link to them is followed if anything follows it).
    ASSERT_EQ(::chmod(cluster_->dir().c_str(), 0755), 0);
  }
  void ExpectRootsFilesUntouched() {
    EXPECT_TRUE(std::filesystem::is_empty(roots_dir_));
    struct stat st {};
    ASSERT_EQ(::stat(roots_file_.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(cluster_->ReadFile(roots_file_), "root's secret\n");
  }
  std::unique_ptr<Cluster> cluster_;
  std::string roots_dir_, roots_file_;
};

TEST_F(UserPathsTest, ALinkPlantedInPlaceOfTheCoresDirectoryLeadsNowhere) {
  StartCluster();
  if (!CoresLandInTheWorkingDirectory())
    GTEST_SKIP() << "kernel.core_pattern '" << KernelCorePattern() << "' writes no core here";
  MakeRootsFiles();
  const unsigned long long id = SubmitAsNobody(
      {"--no-requeue", "--wrap", "ln -s " + roots_dir_ + " cores-$SLURM_JOB_ID; kill -SEGV $$"});
  ASSERT_NE(id, 0u);
  nlohmann::json j = cluster_->WaitJob(id, 60);
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  const std::string detail = j["failure"].is_object() ? j["failure"].value("detail", "") : "";
  EXPECT_TRUE(Contains(detail, "core dumped: " + cluster_->work() + "/core")) << detail;
  EXPECT_FALSE(Contains(detail, roots_dir_)) << detail;
  ExpectRootsFilesUntouched();
}

TEST_F(UserPathsTest, SwappingTheCoresDirectoryForALinkNeverReachesRootsFile) {
  StartCluster();
  if (!CoresLandInTheWorkingDirectory())
    GTEST_SKIP() << "kernel.core_pattern '" << KernelCorePattern() << "' writes no core here";
  MakeRootsFiles();
  // The attacker: every cores-* directory that appears becomes a link to root's file.
  const unsigned long long swapper = SubmitAsNobody(
      {"-w", "node1", "--wrap",
       "touch swapping; while :; do for d in cores-*; do "
       "if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then mv \"$d\" \"gone-$d-$$\" && ln -s " +
           roots_file_ + " \"$d\"; fi; done; done"});
  ASSERT_NE(swapper, 0u);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(cluster_->work() + "/swapping"); },
                      std::chrono::seconds(30)));
  constexpr int kRaces = 21;
  for (int i = 0; i < kRaces; ++i) {
    const unsigned long long id =
        SubmitAsNobody({"-w", "node2", "--no-requeue", "--wrap", "kill -SEGV $$"});
    ASSERT_NE(id, 0u);
    EXPECT_EQ(cluster_->WaitJob(id, 60).value("state", ""), "FAILED");
  }
  EXPECT_EQ(cluster_->Run({"scancel", std::to_string(swapper)}).exit_code, 0);
  EXPECT_EQ(cluster_->WaitJob(swapper, 60).value("state", ""), "CANCELLED");
  ExpectRootsFilesUntouched();
}

TEST_F(UserPathsTest, AFifoOutputHoldsOnlyItsOwnJob) {
  ClusterOptions o;
  o.node_timeout_s = 5;  // an agent that stopped heartbeating would lose its nodes within 5 s
  StartCluster(o);
  const std::string fifo = cluster_->work() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::chown(fifo.c_str(), kNobody, kNobody), 0);
  const unsigned long long held =
      SubmitAsNobody({"-w", "node1", "-o", "fifo", "--wrap", "touch ran"});
  ASSERT_NE(held, 0u);
  ASSERT_TRUE(WaitFor([&] { return cluster_->Job(held).value("state", "") == "RUNNING"; },
                      std::chrono::seconds(30)));
  // Another user's job on the same agent, longer than the node timeout: it runs and completes,
  // so the agent heartbeated all along.
  const unsigned long long other =
      Submit(*cluster_, {"-w", "node1", "--no-requeue", "--wrap", "sleep 8; echo done"});
  ASSERT_NE(other, 0u);
  nlohmann::json j = cluster_->WaitJob(other, 60);
  EXPECT_EQ(j.value("state", ""), "COMPLETED") << j.dump();
  EXPECT_EQ(j.value("restart_count", 0), 0) << j.dump();
  EXPECT_EQ(cluster_->Job(held).value("state", ""), "RUNNING");
  nlohmann::json nodes = cluster_->Get("/api/v1/nodes");
  for (const auto& n : nodes["nodes"]) {  // neither down nor not responding ('*')
    const std::string state = n.value("state", "");
    EXPECT_FALSE(Contains(state, "down") || Contains(state, "*")) << n.dump();
  }
  // Cancelled while it waits for a reader: it ends, and never runs.
  EXPECT_EQ(cluster_->Run({"scancel", std::to_string(held)}).exit_code, 0);
  EXPECT_EQ(cluster_->WaitJob(held, 60).value("state", ""), "CANCELLED");
  ASSERT_TRUE(WaitFor([&] { return ChildrenOf(cluster_->agent_pid(), kNobody) == 0; },
                      std::chrono::seconds(30)));
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  char c;
  EXPECT_EQ(::read(reader, &c, 1), 0);  // no writer holds it
  ::close(reader);
  EXPECT_FALSE(std::filesystem::exists(cluster_->work() + "/ran"));
}

}  // namespace
}  // namespace lockstep::testing
