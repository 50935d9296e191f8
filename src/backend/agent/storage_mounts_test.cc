// The shared file systems on a host (storage_mounts.h): mountinfo, checks that never hang the
// caller (a FUSE mount whose daemon never answers), and bind mounts made and removed as root.
#include "backend/agent/storage_mounts.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;

class StorageMountsTest : public ::testing::Test {
 protected:
  StorageMountsTest() {
    char tmpl[] = "/tmp/lockstep-storage-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~StorageMountsTest() override {
    for (const std::string& m : mounted_) ::umount2(m.c_str(), MNT_DETACH);
    std::filesystem::remove_all(dir_);
  }
  StorageMount Mount(const std::string& kind, const std::string& source, const std::string& path) {
    StorageMount m;
    m.name = "datasets/" + std::filesystem::path(path).filename().string();
    m.kind = kind;
    m.source = source;
    m.path = path;
    m.timeout = 2s;
    return m;
  }
  static bool Root() { return ::geteuid() == 0; }
  std::string dir_;
  std::vector<std::string> mounted_;  // unmounted by the fixture whatever the test did
};

TEST(IsMountPoint, ReadsTheFifthFieldWithTheKernelsEscapes) {
  const std::string info =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "36 22 0:31 / /mnt/data\\040sets rw - nfs4 srv:/x rw\n"
      "37 22 8:1 /srv/ckpt /mnt/ckpt rw shared:1 - ext4 /dev/sda1 rw\n";
  EXPECT_TRUE(IsMountPoint(info, "/"));
  EXPECT_TRUE(IsMountPoint(info, "/mnt/data sets"));
  EXPECT_TRUE(IsMountPoint(info, "/mnt/ckpt"));
  EXPECT_FALSE(IsMountPoint(info, "/mnt"));
  EXPECT_FALSE(IsMountPoint(info, "/mnt/data\\040sets"));
  EXPECT_FALSE(IsMountPoint("", "/"));
}

TEST(UnderHostRoot, PutsTheMountPointAndABindsSourceUnderTheRootOnly) {
  StorageMount bind, nfs;
  bind.name = "checkpoints/ckpt", bind.kind = "bind", bind.source = "/srv/ckpt";
  bind.path = "/mnt/checkpoints/ckpt";
  nfs.name = "datasets/imagenet", nfs.kind = "nfs", nfs.source = "fs1:/export";
  nfs.path = "/mnt/datasets/imagenet";
  EXPECT_EQ(UnderHostRoot(bind, "/host/").path, "/host/mnt/checkpoints/ckpt");
  EXPECT_EQ(UnderHostRoot(bind, "/host").source, "/host/srv/ckpt");
  EXPECT_EQ(UnderHostRoot(nfs, "/host").source, "fs1:/export") << "a server's path is its own";
  EXPECT_EQ(UnderHostRoot(nfs, "/host").path, "/host/mnt/datasets/imagenet");
  EXPECT_EQ(UnderHostRoot(bind, "").path, "/mnt/checkpoints/ckpt");
  EXPECT_EQ(UnderHostRoot(bind, "/").source, "/srv/ckpt");
  EXPECT_EQ(UnderHostRoot(bind, "/host").name, "checkpoints/ckpt") << "reasons name it alike";
}

TEST_F(StorageMountsTest, AHostPathIsCheckedForBeingThere) {
  StorageMount m = Mount("host_path", "", dir_ + "/shared");
  m.source = m.path;
  EXPECT_EQ(CheckStorage(m), "missing");
  std::filesystem::create_directory(m.path);
  EXPECT_EQ(CheckStorage(m), "");
  EXPECT_TRUE(MountStorage(m).ok());  // the site's: nothing to mount
  std::filesystem::remove(m.path);
  std::ofstream(m.path) << "a file";
  EXPECT_EQ(CheckStorage(m), "not a directory");
}

TEST_F(StorageMountsTest, ABindMountIsMadeCheckedAndRemoved) {
  if (!Root()) GTEST_SKIP() << "mounting needs root";
  const std::string source = dir_ + "/source", path = dir_ + "/mnt/checkpoints/ckpt";
  std::filesystem::create_directories(source);
  std::ofstream(source + "/step-100.pt") << "weights";
  StorageMount m = Mount("bind", source, path);
  EXPECT_EQ(CheckStorage(m), "not mounted");
  std::filesystem::create_directories(path);
  EXPECT_EQ(CheckStorage(m), "not mounted");  // the directory alone is not the file system
  mounted_.push_back(path);
  Status st = MountStorage(m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(CheckStorage(m), "");
  EXPECT_TRUE(std::filesystem::exists(path + "/step-100.pt"));
  ASSERT_TRUE(UnmountStorage(path, 2s).ok());
  EXPECT_EQ(CheckStorage(m), "not mounted");
}

TEST_F(StorageMountsTest, AReadOnlyBindMountRefusesWrites) {
  if (!Root()) GTEST_SKIP() << "mounting needs root";
  const std::string source = dir_ + "/source", path = dir_ + "/mnt/datasets/imagenet";
  std::filesystem::create_directories(source);
  StorageMount m = Mount("bind", source, path);
  m.read_only = true;
  mounted_.push_back(path);
  ASSERT_TRUE(MountStorage(m).ok());
  EXPECT_LT(::open((path + "/new").c_str(), O_WRONLY | O_CREAT, 0644), 0);
  EXPECT_EQ(errno, EROFS);
}

// The storage DaemonSet's case: the mount is made under a shared mount and reaches the host (and
// from there job pods) by propagation. The copy it propagates must be read-only too.
TEST_F(StorageMountsTest, AReadOnlyBindMountIsReadOnlyInEveryCopyPropagationMakes) {
  if (!Root()) GTEST_SKIP() << "mounting needs root";
  const std::string source = dir_ + "/source", shared = dir_ + "/shared", peer = dir_ + "/peer";
  for (const std::string& d : {source, shared, peer}) std::filesystem::create_directories(d);
  mounted_ = {shared + "/imagenet", peer + "/imagenet", peer, shared};  // innermost first
  ASSERT_EQ(::mount(shared.c_str(), shared.c_str(), nullptr, MS_BIND, nullptr), 0);
  ASSERT_EQ(::mount(nullptr, shared.c_str(), nullptr, MS_SHARED, nullptr), 0);
  ASSERT_EQ(::mount(shared.c_str(), peer.c_str(), nullptr, MS_BIND, nullptr), 0);  // its peer
  StorageMount m = Mount("bind", source, shared + "/imagenet");
  m.read_only = true;
  Status st = MountStorage(m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(CheckStorage(Mount("bind", source, peer + "/imagenet")), "") << "propagated";
  for (const std::string& copy : {shared + "/imagenet/new", peer + "/imagenet/new"}) {
    errno = 0;
    EXPECT_LT(::open(copy.c_str(), O_WRONLY | O_CREAT, 0644), 0) << copy;
    EXPECT_EQ(errno, EROFS) << copy;
  }
  EXPECT_FALSE(std::filesystem::exists(source + "/new"));
}

TEST_F(StorageMountsTest, AMountThatNeverAnswersReadsAsHungWithinItsTimeout) {
  if (!Root()) GTEST_SKIP() << "mounting needs root";
  const int fuse = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse < 0) GTEST_SKIP() << "no /dev/fuse";
  const std::string path = dir_ + "/hung";
  std::filesystem::create_directory(path);
  // A FUSE file system whose daemon (this test) never reads its requests: every look waits.
  const std::string options = "fd=" + std::to_string(fuse) + ",rootmode=40000,user_id=0,group_id=0";
  if (::mount("lockstep-test", path.c_str(), "fuse.lockstep-test", 0, options.c_str()) != 0) {
    ::close(fuse);
    GTEST_SKIP() << "cannot mount FUSE here";
  }
  mounted_.push_back(path);
  StorageMount m = Mount("host_path", path, path);
  m.timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(CheckStorage(m), "did not answer within 1 s");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  ::umount2(path.c_str(), MNT_DETACH);
  ::close(fuse);  // aborts the connection: the stuck look ends
}

}  // namespace
}  // namespace lockstep::agent
