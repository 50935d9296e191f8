// Shared storage on bare hosts end to end (issue 28, docs/storage.md), with the real lockstepd,
// agent (as root) and CLI: a declared bind file system mounted by the agent and used by a job; a
// mount lost under the nodes drains them with its name and they resume when it is back (a job
// waits meanwhile and never starts without it); a mount that never answers (a FUSE file system
// whose daemon is silent) drains only its node, within its timeout, while other jobs run; a
// change of the YAML's list reaches the running agent and `lockstep storage` without a restart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/cluster_harness.h"
#include "tests/process_state.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root: the agent mounts file systems";
    ClusterOptions o;
    o.extra_yaml = "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n"
                   "health:\n  interval: 1\n";
    cluster_ = std::make_unique<Cluster>(o);
    source_ = cluster_->dir() + "/ckpt-src";
    category_ = cluster_->dir() + "/mnt/checkpoints";
    mount_ = category_ + "/ckpt";
    fs::create_directories(source_);
    fs::permissions(source_, fs::perms::all);
    yaml_ = cluster_->ReadFile(cluster_->dir() + "/cluster.yaml");
  }
  void TearDown() override {
    for (const std::string& m : {mount_, hung_}) {
      while (!m.empty() && Mounted(m)) ::umount2(m.c_str(), MNT_DETACH);
    }
    if (fuse_ >= 0) ::close(fuse_);
  }
  void WriteStorage(const std::string& storage) {
    const std::string path = cluster_->dir() + "/cluster.yaml";
    std::ofstream(path + ".new") << yaml_ << storage;
    fs::rename(path + ".new", path);  // whole, as a ConfigMap's swap
  }
  std::string BindCheckpoints() const {
    return "  - name: ckpt\n    category: " + category_ + "\n    bind: " + source_ +
           "\n    timeout: 2\n";
  }
  std::string NodeField(const std::string& node, const char* field) {
    const nlohmann::json nodes = cluster_->Get("/api/v1/nodes");  // kept: the loop reads into it
    if (!nodes.contains("nodes")) return "";
    for (const auto& n : nodes["nodes"])
      if (n.value("name", "") == node) return n.value(field, "");
    return "";
  }
  std::string NodeReason(const std::string& node) { return NodeField(node, "reason"); }
  std::string NodeState(const std::string& node) { return NodeField(node, "state"); }
  std::unique_ptr<Cluster> cluster_;
  std::string yaml_, source_, category_, mount_, hung_;
  int fuse_ = -1;
};

TEST_F(StorageTest, AJobUsesADeclaredFileSystemAndALostMountDrainsUntilItIsBack) {
  WriteStorage("storage:\n" + BindCheckpoints());
  ASSERT_TRUE(cluster_->Start());
  ASSERT_TRUE(WaitFor([&] { return Mounted(mount_); }, 30s)) << "the agent did not mount it";
  CommandResult list = cluster_->Run({"storage"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(Contains(list.out, "checkpoints/ckpt")) << list.out;
  EXPECT_TRUE(Contains(list.out, mount_)) << list.out;
  CommandResult config = cluster_->Run({"scontrol", "show", "config"});
  EXPECT_TRUE(Contains(config.out, "checkpoints/ckpt=" + mount_ + "(bind,rw)")) << config.out;

  unsigned long long id = Submit(*cluster_, {"--wrap", "echo step-100 > " + mount_ + "/ckpt.txt"});
  ASSERT_NE(id, 0u);
  EXPECT_EQ(cluster_->WaitJob(id, 60).value("state", ""), "COMPLETED");
  EXPECT_EQ(cluster_->ReadFile(source_ + "/ckpt.txt"), "step-100\n");

  // The file system goes away under the nodes (unmounted, its source gone): they drain with its
  // name, and a job waits rather than start without it.
  fs::rename(source_, source_ + ".away");
  ASSERT_EQ(::umount2(mount_.c_str(), MNT_DETACH), 0);
  ASSERT_TRUE(WaitFor([&] { return Contains(NodeReason("node1"), "storage checkpoints/ckpt: not mounted"); }, 30s))
      << NodeReason("node1");
  ASSERT_TRUE(WaitFor([&] { return Contains(NodeState("node2"), "drain"); }, 30s));
  id = Submit(*cluster_, {"--wrap", "cat " + mount_ + "/ckpt.txt"});
  ASSERT_NE(id, 0u);
  EXPECT_EQ(cluster_->Job(id).value("state", ""), "PENDING");
  // Back: mounted again by the agent, the nodes resume, the job runs and reads it.
  fs::rename(source_ + ".away", source_);
  ASSERT_TRUE(WaitFor([&] { return NodeState("node1") == "idle" || NodeState("node1") == "mixed" ||
                                   NodeState("node1") == "allocated"; },
                      30s))
      << NodeState("node1") << " " << NodeReason("node1");
  EXPECT_EQ(cluster_->WaitJob(id, 60).value("state", ""), "COMPLETED");
}

TEST_F(StorageTest, AJobNeverStartsOnANodeWithoutItsFileSystem) {
  fs::remove(source_);  // the bind's source is not there: the agent cannot mount it
  WriteStorage("storage:\n" + BindCheckpoints());
  cluster_->StartDaemon();
  cluster_->StartAgent();
  ASSERT_TRUE(WaitFor([&] { return cluster_->Get("/api/v1/nodes")["nodes"].size() == 2; }, 30s));
  // Submitted as soon as the nodes are there, before or after their first check.
  const unsigned long long id =
      Submit(*cluster_, {"-N1", "--wrap", "echo ran > " + mount_ + "/ran.txt"});
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return Contains(NodeReason("node1"), "storage checkpoints/ckpt: not mounted") &&
                                   Contains(NodeReason("node2"), "storage checkpoints/ckpt: not mounted"); },
                      30s))
      << NodeReason("node1") << " / " << NodeReason("node2");
  // Placed before the first check it may be dispatched once, refused by the agent's gate and
  // requeued (launch_failed): it waits, and it never ran.
  EXPECT_TRUE(WaitFor([&] { return cluster_->Job(id).value("state", "") == "PENDING"; }, 30s))
      << cluster_->Job(id).dump();
  EXPECT_FALSE(fs::exists(mount_ + "/ran.txt"));
  // The file system comes: mounted, the nodes resume, the job runs on it.
  fs::create_directories(source_);
  EXPECT_EQ(cluster_->WaitJob(id, 90).value("state", ""), "COMPLETED");
  EXPECT_EQ(cluster_->ReadFile(source_ + "/ran.txt"), "ran\n");
}

TEST_F(StorageTest, AMountThatNeverAnswersDrainsOnlyItsNodeAndHoldsNothingElse) {
  hung_ = cluster_->dir() + "/hung";
  fs::create_directories(hung_);
  fuse_ = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse_ < 0) GTEST_SKIP() << "no /dev/fuse";
  const std::string options =
      "fd=" + std::to_string(fuse_) + ",rootmode=40000,user_id=0,group_id=0";
  if (::mount("lockstep-test", hung_.c_str(), "fuse.lockstep-test", 0, options.c_str()) != 0)
    GTEST_SKIP() << "cannot mount FUSE here";
  WriteStorage("storage:\n  - name: dead\n    host_path: " + hung_ +
               "\n    nodes: node1\n    timeout: 1\n");
  // Not Start(): it waits for every node idle, and node1 drains at its first health round.
  cluster_->StartDaemon();
  cluster_->StartAgent();
  ASSERT_TRUE(WaitFor([&] { return Contains(NodeReason("node1"), "storage dead: did not answer within 1 s"); }, 30s))
      << NodeReason("node1");
  // The agent goes on: a job runs on the other node, longer than a few health rounds.
  unsigned long long id = Submit(*cluster_, {"-w", "node2", "--wrap", "sleep 3; echo ok"});
  ASSERT_NE(id, 0u);
  EXPECT_EQ(cluster_->WaitJob(id, 60).value("state", ""), "COMPLETED");
  EXPECT_FALSE(Contains(NodeReason("node2"), "storage"));
  // The dead mount goes away (the directory answers again): node1 resumes.
  ::umount2(hung_.c_str(), MNT_DETACH);
  ::close(fuse_);
  fuse_ = -1;
  ASSERT_TRUE(WaitFor([&] { return NodeState("node1") == "idle"; }, 30s)) << NodeReason("node1");
}

TEST_F(StorageTest, AChangedListReachesTheRunningAgentAndUsers) {
  ASSERT_TRUE(cluster_->Start());
  EXPECT_FALSE(Contains(cluster_->Run({"storage"}).out, "checkpoints/ckpt"));
  WriteStorage("storage:\n" + BindCheckpoints());
  ASSERT_TRUE(WaitFor([&] { return Mounted(mount_); }, 30s)) << "not mounted after the change";
  EXPECT_TRUE(Contains(cluster_->Run({"storage"}).out, "checkpoints/ckpt"));
  // A broken file changes nothing; the error is logged with its place.
  WriteStorage("storage:\n  - name: broken\n    bind: relative/path\n");
  ASSERT_TRUE(WaitFor([&] { return Contains(cluster_->ReadFile(cluster_->dir() + "/lockstepd.log"),
                                            "storage[0].bind: 'relative/path' is not a plain absolute path"); },
                      30s));
  EXPECT_TRUE(Mounted(mount_));
  EXPECT_TRUE(Contains(cluster_->Run({"storage"}).out, "checkpoints/ckpt"));
  // Removed: unmounted (no job runs on its nodes).
  WriteStorage("");
  ASSERT_TRUE(WaitFor([&] { return !Mounted(mount_); }, 30s)) << "still mounted after removal";
  EXPECT_FALSE(Contains(cluster_->Run({"storage"}).out, "checkpoints/ckpt"));
}

// `lockstep up --storage DIR[:ro]`: host directories every node and job sees at the same path.
TEST(UpStorage, TheOneMachineClusterDeclaresItsDirectories) {
  if (::getuid() != 0) GTEST_SKIP() << "the one-machine cluster runs jobs as root here";
  Cluster c;  // for its directory and binaries
  const std::string state = c.dir() + "/up", shared = c.dir() + "/shared",
                    data = c.dir() + "/data sets";
  fs::create_directories(shared + "/project");
  fs::create_directories(data);
  std::ofstream(data + "/train.txt") << "tokens\n";
  const std::map<std::string, std::string> env = {{"LOCKSTEP_STATE_DIR", state}};
  CommandResult bad = c.Run({"up", "--state-dir", state, "--storage", c.dir() + "/missing"}, "",
                            -1, "", env);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(Contains(bad.err, "--storage " + c.dir() + "/missing: not a directory")) << bad.err;
  CommandResult up = c.Run({"up", "--state-dir", state, "--nodes", "1", "--gpus-per-node", "0",
                            "--cpus-per-node", "2", "--storage", shared, "--storage",
                            data + ":ro"},
                           "", -1, "", env);
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  CommandResult list = c.Run({"storage"}, "", -1, "", env);
  EXPECT_TRUE(Contains(list.out, shared)) << list.out;
  EXPECT_TRUE(Contains(list.out, data)) << list.out;
  EXPECT_TRUE(Contains(list.out, "host_path")) << list.out;
  // A job submitted from the shared directory writes its output there.
  CommandResult sub = c.Run({"sbatch", "--parsable", "--wrap", "cat '" + data + "/train.txt'"},
                            shared + "/project", -1, "", env);
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  const std::string out = shared + "/project/slurm-" + sub.out.substr(0, sub.out.find('\n')) + ".out";
  EXPECT_TRUE(WaitFor([&] { return c.ReadFile(out) == "tokens\n"; }, 60s)) << c.ReadFile(out);
  c.Run({"down", "--state-dir", state}, "", -1, "", env);
}

}  // namespace
}  // namespace lockstep::testing
