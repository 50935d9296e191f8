// The storage DaemonSet of deploy/kubernetes/storage-agent.yaml as a real pod on the real node
// (fixture: kubernetes_daemonset_fixture.h; docs/storage.md): two file systems declared in the
// cluster YAML (binds of host directories: this machine's kernel has no NFS, see below) are
// mounted by the agent pod under their categories on the host, through Bidirectional
// propagation; an ordinary user's job submitted from one runs there as the user, reads the other
// (read-only), and writes a checkpoint and its slurm-%j.out that the host has, owned by the user;
// a file system added to the YAML while the job's pod runs appears inside it without a restart,
// and disappears when removed; --container-mounts of an undeclared path is refused; a file
// system that cannot be mounted drains the node with its name, and the node resumes once it is
// mounted again.
//
// NFS is not tested here: this machine's kernel has neither the NFS client nor the server
// (/proc/filesystems lists no nfs, and there are no modules to load), so Debian's
// nfs-kernel-server cannot serve and no mount -t nfs can succeed.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/kubernetes_daemonset_fixture.h"
#include "tests/process_state.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kTag[] = "node-sd";
constexpr char kPodSelector[] = "app.kubernetes.io/component=storage-agent";
constexpr uid_t kUser = 65534;  // nobody: an ordinary user, neither root nor lockstepd's
constexpr gid_t kGroup = 65534;

uid_t OwnerOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

long long MillisecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t)
      .count();
}

class StorageDaemonSetTest : public DaemonSetTest {
 protected:
  void SetUp() override {
    DaemonSetTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (::getuid() != 0) GTEST_SKIP() << "needs root: the DaemonSet mounts on the host";
    // The DaemonSet's mount root must be a shared mount on the host (Bidirectional): what
    // deploy/kubernetes/storage-agent.yaml tells a site to do.
    ASSERT_NO_FATAL_FAILURE(MakeSharedMountDir("lockstep-sds", root_));
    sources_ = root_ + "-src";
    fs::create_directories(sources_ + "/imagenet");
    std::ofstream(sources_ + "/imagenet/input.txt") << "dataset-line\n";
    fs::create_directories(sources_ + "/ckpt/project");
    ASSERT_EQ(::chown((sources_ + "/ckpt/project").c_str(), kUser, kGroup), 0);
    fs::create_directories(sources_ + "/extra");
    std::ofstream(sources_ + "/extra/marker") << "mounted-later\n";
  }

  void TearDown() override {
    if (!root_.empty()) {
      for (const std::string& m : {Imagenet(), Extra(), Ckpt(), root_})
        while (Mounted(m)) ::umount2(m.c_str(), MNT_DETACH);
      std::error_code ignored;
      fs::remove_all(root_, ignored);
      fs::remove_all(sources_, ignored);
    }
    DaemonSetTest::TearDown();
  }

  std::string Imagenet() const { return root_ + "/datasets/imagenet"; }
  std::string Extra() const { return root_ + "/datasets/extra"; }
  std::string Ckpt() const { return root_ + "/checkpoints/ckpt"; }

  // The cluster YAML's storage: a read-only dataset and the checkpoints, and maybe one more.
  std::string StorageYaml(bool with_extra) const {
    std::string yaml = "health:\n  interval: 1\nstorage:\n"
                       "  - name: imagenet\n    category: " + root_ + "/datasets\n"
                       "    bind: " + sources_ + "/imagenet\n    read_only: true\n"
                       "  - name: ckpt\n    category: " + root_ + "/checkpoints\n"
                       "    bind: " + sources_ + "/ckpt\n";
    if (with_extra)
      yaml += "  - name: extra\n    category: " + root_ + "/datasets\n    bind: " + sources_ +
              "/extra\n";
    return yaml;
  }

  // The DaemonSet's mount root, /mnt in the manifest, made this test's directory.
  std::string MountRootPatch() const {
    return ", {\"op\": \"test\", \"path\": \"/spec/template/spec/volumes/3/name\", \"value\": "
           "\"mount-root\"},"
           " {\"op\": \"replace\", \"path\": \"/spec/template/spec/volumes/3/hostPath/path\", "
           "\"value\": \"" + root_ + "\"},"
           " {\"op\": \"test\", \"path\": \"/spec/template/spec/containers/0/volumeMounts/3/name\","
           " \"value\": \"mount-root\"},"
           " {\"op\": \"replace\", \"path\": "
           "\"/spec/template/spec/containers/0/volumeMounts/3/mountPath\", \"value\": \"/host" +
           root_ + "\"}";
  }

  // `sinfo -N` as a user reads it: "<state> <reason>" of the node.
  static std::string StateAndReason(Cluster& c) {
    std::string s = c.Run({"sinfo", "-N", "-h", "-o", "%T %E"}).out;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  std::string root_;     // the mount root: the categories' parent, a shared mount
  std::string sources_;  // the host directories the declared file systems bind
};

TEST_F(StorageDaemonSetTest, DeclaredFileSystemsReachRunningPodsAndAMissingOneDrainsTheNode) {
  ASSERT_EQ(NodeScript("controllers"), 0);
  ASSERT_TRUE(ImportLockstepImage());
  std::unique_ptr<Cluster> cluster = StartServing(kTag, StorageYaml(false));
  Cluster& c = *cluster;
  ASSERT_NO_FATAL_FAILURE(CreateSecrets(c, "lockstep-storage-agent"));
  ASSERT_NO_FATAL_FAILURE(
      ApplyAgent("storage-agent.yaml", "lockstep-storage-agent", MountRootPatch()));
  const std::string pod = WaitReadyPod(kPodSelector);
  ASSERT_FALSE(pod.empty()) << PodsOf(kPodSelector).dump() << "\n"
                            << Output(KubectlLine("-n lockstep get events 2>&1"));
  auto agent_log = [&] { return Output(KubectlLine("-n lockstep logs " + pod + " 2>&1")); };

  // Mounted by the pod, on the host: the dataset read-only.
  ASSERT_TRUE(WaitFor([&] { return Mounted(Imagenet()) && Mounted(Ckpt()); }, seconds(60)))
      << agent_log();
  EXPECT_EQ(ReadAll(Imagenet() + "/input.txt"), "dataset-line\n");
  const int fd = ::open((Imagenet() + "/new").c_str(), O_CREAT | O_WRONLY, 0644);
  EXPECT_EQ(fd, -1);
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(StateAndReason(c), "idle none");

  // An ordinary user's job from the checkpoints' project directory.
  const std::string project = Ckpt() + "/project";
  const std::string script =
      "#!/bin/sh\n"
      "echo \"pwd $(pwd) uid $(id -u)\"\n"
      "echo \"data $(cat " + Imagenet() + "/input.txt)\"\n"
      "echo step-1 > checkpoint.txt\n"
      "touch " + Imagenet() + "/new 2>/dev/null && echo dataset-writable || echo dataset-read-only\n"
      "echo waiting\n"
      "while [ ! -e " + Extra() + "/marker ]; do sleep 0.05; done\n"
      "echo \"seen $(cat " + Extra() + "/marker)\"\n"
      "while [ -e " + Extra() + "/marker ]; do sleep 0.05; done\n"
      "echo gone\n";
  std::ofstream(project + "/train.sh") << script;
  CommandResult r = c.Run({"sbatch", "--parsable", "-t", "5", "train.sh"}, project, kUser);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // on storage: no warning
  const unsigned long long id = std::stoull(r.out);
  const std::string out_file = project + "/slurm-" + std::to_string(id) + ".out";
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadAll(out_file), "waiting\n"); }, seconds(90)))
      << ReadAll(out_file) << c.Job(id).dump() << DaemonLog(c);

  // A file system declared while the pod runs: mounted by the agent, seen inside the pod.
  const auto added_at = std::chrono::steady_clock::now();
  WriteClusterYaml(c, kTag, StorageYaml(true));
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadAll(out_file), "seen mounted-later\n"); },
                      seconds(60)))
      << ReadAll(out_file) << agent_log();
  const long long added_ms = MillisecondsSince(added_at);
  EXPECT_TRUE(Contains(c.Run({"storage"}).out, "datasets/extra")) << c.Run({"storage"}).out;
  // Removed: unmounted (no job of the agent's holds it), gone from the pod.
  const auto removed_at = std::chrono::steady_clock::now();
  WriteClusterYaml(c, kTag, StorageYaml(false));
  ASSERT_TRUE(WaitFor([&] { return Contains(ReadAll(out_file), "gone\n"); }, seconds(60)))
      << ReadAll(out_file) << agent_log();
  const long long removed_ms = MillisecondsSince(removed_at);
  std::printf("[ figure ] a file system declared in the YAML appeared in the running pod after "
              "%lld ms, and disappeared %lld ms after it was removed (lockstepd reads its YAML "
              "every 2 s; the job polls every 50 ms)\n",
              added_ms, removed_ms);

  Json j = c.WaitJob(id, 60);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(c);
  const std::string out = ReadAll(out_file);
  EXPECT_TRUE(Contains(out, "pwd " + project + " uid 65534\n")) << out;
  EXPECT_TRUE(Contains(out, "data dataset-line\n")) << out;
  EXPECT_TRUE(Contains(out, "dataset-read-only\n")) << out;  // read-only in the pod too
  EXPECT_EQ(OwnerOf(out_file), kUser);
  // On the host's directory the file system binds, owned by the user.
  EXPECT_EQ(ReadAll(sources_ + "/ckpt/project/checkpoint.txt"), "step-1\n");
  EXPECT_EQ(OwnerOf(sources_ + "/ckpt/project/checkpoint.txt"), kUser);
  EXPECT_EQ(OwnerOf(sources_ + "/ckpt/project/slurm-" + std::to_string(id) + ".out"), kUser);

  // Only declared file systems are mounted into jobs.
  r = c.Run({"sbatch", "--container-mounts=/etc:/host-etc", "--wrap", "cat /host-etc/shadow"},
            project, kUser);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "--container-mounts: /etc is not on a declared file system")) << r.err;

  // The dataset's source goes and its mount with it: the agent cannot mount it again, and the
  // node drains with its name; back, mounted again, and the node resumes.
  fs::rename(sources_ + "/imagenet", sources_ + "/imagenet.away");
  while (Mounted(Imagenet())) ASSERT_EQ(::umount2(Imagenet().c_str(), MNT_DETACH), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        return StateAndReason(c).starts_with(
            "drained health: storage datasets/imagenet: not mounted");
      },
      seconds(60)))
      << StateAndReason(c) << "\n" << agent_log();
  fs::rename(sources_ + "/imagenet.away", sources_ + "/imagenet");
  EXPECT_TRUE(WaitFor([&] { return StateAndReason(c) == "idle none"; }, seconds(60)))
      << StateAndReason(c) << "\n" << agent_log();
  EXPECT_TRUE(Mounted(Imagenet()));

  DeleteAgent("lockstep-storage-agent", kPodSelector);
  EXPECT_EQ(Kubectl("-n lockstep delete secret lockstepd-tls lockstep-storage-agent"), 0);
}

}  // namespace
}  // namespace lockstep::testing
