// Shared storage on a real node (fixture: kubernetes_node_fixture.h; docs/storage.md): a host
// directory declared as storage (what `lockstep up --storage DIR` writes), an ordinary user's job
// submitted from it running there as the user, reading its data and writing a checkpoint and its
// slurm-%j.out that the host sees, owned by the user; a directory bind-mounted under it on the
// host while the job's pod runs appearing inside the pod; --container-mounts of a declared
// directory read-only, of any other path refused; the warning for a job outside the storage;
// and all of it started as a user would, with `lockstep up --backend kubernetes --storage DIR`.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/kubernetes_node_fixture.h"
#include "tests/process_state.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kJobSeconds = 60;
constexpr uid_t kUser = 65534;  // nobody: an ordinary user, neither root nor lockstepd's
constexpr gid_t kGroup = 65534;

uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

// A directory the user owns, made by root for the test.
void UserDirectory(const std::string& path) {
  fs::create_directories(path);
  ASSERT_EQ(::chown(path.c_str(), kUser, kGroup), 0) << path;
}

class StorageNodeTest : public RealNodeTest {
 protected:
  void SetUp() override {
    RealNodeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (::getuid() != 0) GTEST_SKIP() << "needs root: the test mounts on the host";
    // HostToContainer propagation needs the directory in a shared mount.
    ASSERT_NO_FATAL_FAILURE(MakeSharedMountDir("lockstep-storage", storage_));
  }

  void TearDown() override {
    if (!storage_.empty()) {
      for (const std::string& m : {storage_ + "/project/extra", storage_})
        while (Mounted(m)) ::umount2(m.c_str(), MNT_DETACH);
      std::error_code ignored;
      fs::remove_all(storage_, ignored);
      fs::remove_all(extra_source_, ignored);
    }
    RealNodeTest::TearDown();
  }

  // `lockstep up --storage DIR`'s entry.
  std::string StorageYaml() const {
    return "storage:\n  - name: shared\n    host_path: " + storage_ + "\n";
  }

  // sbatch as the user in `cwd`.
  CommandResult SbatchAsUser(Cluster& c, std::vector<std::string> args, const std::string& cwd) {
    args.insert(args.begin(), {"sbatch", "--parsable"});
    return c.Run(args, cwd, kUser);
  }

  static unsigned long long IdOf(const CommandResult& r) {
    return r.exit_code == 0 ? std::stoull(r.out) : 0;
  }

  std::string storage_;
  std::string extra_source_;
};

TEST_F(StorageNodeTest, AUsersJobRunsInItsDirectoryOnStorageAndSeesMountsAddedMeanwhile) {
  const std::string ns = "node-storage";
  std::unique_ptr<Cluster> c = StartOnNode(ns, StorageYaml());
  const std::string project = storage_ + "/project";
  UserDirectory(project);
  UserDirectory(project + "/data");
  UserDirectory(project + "/extra");  // a mount point, mounted over while the job runs
  std::ofstream(project + "/data/input.txt") << "dataset-line\n";
  extra_source_ = storage_ + "-extra";
  fs::create_directories(extra_source_);
  std::ofstream(extra_source_ + "/marker") << "mounted-later\n";

  const char* script =
      "#!/bin/sh\n"
      "echo \"pwd $(pwd) uid $(id -u)\"\n"
      "echo \"data $(cat data/input.txt)\"\n"
      "echo step-1 > checkpoint.txt\n"
      "grep NoNewPrivs /proc/self/status\n"
      "echo waiting\n"
      "while [ ! -e extra/marker ]; do sleep 0.05; done\n"
      "echo \"seen $(cat extra/marker)\"\n";
  std::ofstream(project + "/train.sh") << script;
  CommandResult r = SbatchAsUser(*c, {"-t", "2", "train.sh"}, project);
  const unsigned long long id = IdOf(r);
  ASSERT_GT(id, 0u) << r.out << r.err;
  EXPECT_EQ(r.err, "");  // on storage: no warning
  const std::string out_file = project + "/slurm-" + std::to_string(id) + ".out";
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadAll(out_file), "waiting\n"); },
                      std::chrono::seconds(kJobSeconds)))
      << ReadAll(out_file) << c->Job(id).dump() << DaemonLog(*c);

  // A directory bind-mounted on the host under the storage while the pod runs: inside it too.
  const auto mounted_at = std::chrono::steady_clock::now();
  ASSERT_EQ(::mount(extra_source_.c_str(), (project + "/extra").c_str(), nullptr, MS_BIND,
                    nullptr),
            0);
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadAll(out_file), "seen mounted-later\n"); },
                      std::chrono::seconds(kJobSeconds)))
      << ReadAll(out_file) << DaemonLog(*c);
  const auto seen_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - mounted_at)
                           .count();
  std::printf("[ figure ] a host mount under the storage appeared in the running pod after %lld ms"
              " (the job polls every 50 ms)\n",
              static_cast<long long>(seen_ms));

  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(*c);
  const std::string out = ReadAll(out_file);
  EXPECT_TRUE(Contains(out, "pwd " + project + " uid 65534\n")) << out;
  EXPECT_TRUE(Contains(out, "data dataset-line\n")) << out;
  EXPECT_TRUE(Contains(out, "NoNewPrivs:\t1\n")) << out;
  EXPECT_EQ(OwnerOf(out_file), kUser);
  EXPECT_EQ(ReadAll(project + "/checkpoint.txt"), "step-1\n");
  EXPECT_EQ(OwnerOf(project + "/checkpoint.txt"), kUser);
  // lockstep logs reads the file (lockstepd's host sees the storage), as on bare hosts.
  CommandResult logs = c->Run({"logs", std::to_string(id)}, "", kUser);
  EXPECT_EQ(logs.out, out) << logs.err;
}

TEST_F(StorageNodeTest, ContainerMountsBindDeclaredDirectoriesOnlyAndJobsElsewhereAreWarned) {
  const std::string ns = "node-mounts";
  std::unique_ptr<Cluster> c = StartOnNode(ns, StorageYaml());
  const std::string project = storage_ + "/project";
  UserDirectory(project);
  UserDirectory(storage_ + "/datasets");
  std::ofstream(storage_ + "/datasets/input.txt") << "from-the-dataset\n";

  CommandResult r = SbatchAsUser(
      *c,
      {"--container-mounts=" + storage_ + "/datasets:/data:ro", "--wrap",
       "cat /data/input.txt; touch /data/new 2>/dev/null && echo writable || echo read-only"},
      project);
  const unsigned long long id = IdOf(r);
  ASSERT_GT(id, 0u) << r.out << r.err;
  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(*c);
  EXPECT_EQ(ReadAll(project + "/slurm-" + std::to_string(id) + ".out"),
            "from-the-dataset\nread-only\n");
  EXPECT_FALSE(fs::exists(storage_ + "/datasets/new"));

  // Any other host path: refused at submission, nothing queued.
  const std::string before = c->Run({"squeue", "-h", "-t", "all", "-o", "%i"}).out;
  r = SbatchAsUser(*c, {"--container-mounts=/etc:/host-etc", "--wrap", "cat /host-etc/shadow"},
                   project);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "--container-mounts: /etc is not on a declared file system")) << r.err;
  EXPECT_EQ(c->Run({"squeue", "-h", "-t", "all", "-o", "%i"}).out, before);

  // A job whose directory is on no declared storage: accepted, with a warning that says why.
  const std::string elsewhere = storage_ + "-elsewhere";
  UserDirectory(elsewhere);
  r = SbatchAsUser(*c, {"--wrap", "echo in-the-image"}, elsewhere);
  const unsigned long long plain = IdOf(r);
  ASSERT_GT(plain, 0u) << r.out << r.err;
  EXPECT_EQ(r.err, "sbatch: warning: " + elsewhere +
                       " is not on a declared file system (lockstep storage): the job runs in its "
                       "image's directory and its output goes to its pods' logs (lockstep logs)\n");
  EXPECT_EQ(c->WaitJob(plain, kJobSeconds)["state"], "COMPLETED");
  EXPECT_EQ(c->Run({"logs", std::to_string(plain)}, "", kUser).out, "in-the-image\n");
  std::error_code ignored;
  fs::remove_all(elsewhere, ignored);
}

// The first step as its user types it: `lockstep up --backend kubernetes --storage DIR`,
// then an ordinary user's job from DIR/project, which runs there as the user and leaves its
// output and checkpoint there.
TEST_F(StorageNodeTest, UpWithStorageRunsAUsersJobInItsSubmitDirectory) {
  ClusterOptions o;
  Cluster c(o);  // only for its directory and Run()
  LockstepUp up(c, {"--storage", storage_});
  const std::string& state = up.state;
  CommandResult r = up.result;
  ASSERT_EQ(r.exit_code, 0) << r.err << c.ReadFile(state + "/lockstepd.log");
  const std::map<std::string, std::string> env = {{"LOCKSTEP_STATE_DIR", state}};
  const std::string project = storage_ + "/project";
  UserDirectory(project);
  std::ofstream(project + "/input.txt") << "dataset-line\n";
  r = c.Run({"sbatch", "--parsable", "--container-image", job_image_, "--wrap",
             "echo \"$(pwd) $(id -u) $(cat input.txt)\"; echo step-1 > checkpoint.txt"},
            project, kUser, "", env);
  const unsigned long long id = IdOf(r);
  ASSERT_GT(id, 0u) << r.out << r.err;
  EXPECT_EQ(r.err, "");  // on storage: no warning
  auto state_of = [&] {
    CommandResult s = c.Run({"sacct", "-n", "-X", "-P", "-j", std::to_string(id), "-o", "State"},
                            "", -1, "", env);
    return s.out.substr(0, s.out.find('\n'));
  };
  ASSERT_TRUE(WaitFor([&] { return state_of() == "COMPLETED"; }, std::chrono::seconds(kJobSeconds)))
      << state_of() << c.ReadFile(state + "/lockstepd.log");
  const std::string out_file = project + "/slurm-" + std::to_string(id) + ".out";
  EXPECT_EQ(ReadAll(out_file), project + " 65534 dataset-line\n");
  EXPECT_EQ(OwnerOf(out_file), kUser);
  EXPECT_EQ(ReadAll(project + "/checkpoint.txt"), "step-1\n");
  EXPECT_EQ(OwnerOf(project + "/checkpoint.txt"), kUser);
}

}  // namespace
}  // namespace lockstep::testing
