// End to end: sbcast and srun --bcast (issue 31) through the real CLI, lockstepd and agent on a
// 2-node cluster: the file lands on the job's nodes with its content, mode and (-p) times;
// Slurm's refusals (an existing file without -f, another user's job, bad options); and the
// privilege boundary: each node writes as the job's user, so a link the user planted is never
// followed into root's file and a directory the user cannot write stays unwritten.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using std::chrono::seconds;
namespace fs = std::filesystem;

constexpr int kNobody = 65534;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Write(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path, std::ios::binary) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

class Sbcast : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new Cluster();
    ASSERT_TRUE(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  Sbcast() {
    char tmpl[] = "/tmp/lockstep-sbcast-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    ::chmod(dir_.c_str(), 0755);
  }
  ~Sbcast() override {
    for (unsigned long long id : jobs_) cluster_->Run({"scancel", std::to_string(id)});
    fs::remove_all(dir_);
  }
  // A 2-node job of `uid` (-1: root) holding its nodes, once it runs.
  unsigned long long RunningJob(int uid = -1) {
    CommandResult r = cluster_->Run(
        {"sbatch", "--parsable", "-N2", "-t", "5", "-o", "/dev/null", "--wrap", "sleep 300"},
        "/tmp", uid);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const unsigned long long id = std::stoull(r.out);
    jobs_.push_back(id);
    EXPECT_TRUE(WaitFor([&] { return cluster_->Job(id)["state"] == "RUNNING"; }, seconds(20)));
    return id;
  }
  CommandResult RunSbcast(const std::vector<std::string>& args, int uid = -1) {
    std::vector<std::string> argv = {"sbcast"};
    argv.insert(argv.end(), args.begin(), args.end());
    return cluster_->Run(argv, dir_, uid, "", {{"SLURM_JOB_ID", ""}});
  }
  static Cluster* cluster_;
  std::string dir_;
  std::vector<unsigned long long> jobs_;
};
Cluster* Sbcast::cluster_ = nullptr;

TEST_F(Sbcast, TheFileLandsWithItsContentModeAndTimes) {
  const unsigned long long id = RunningJob();
  std::string content;
  for (int i = 0; content.size() < (5u << 20); ++i) content += std::to_string(i * 7919) + "\n";
  Write(dir_ + "/src.bin", content, 0750);
  const utimbuf times{1000000000, 1234567890};
  ASSERT_EQ(::utime((dir_ + "/src.bin").c_str(), &times), 0);
  // -s 1m: the 5 MiB file goes in pieces, each written in its place.
  CommandResult r = RunSbcast({"-p", "-s", "1m", "-j", std::to_string(id), "src.bin", "copy.bin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  struct stat st {};  // before it is read, which may move its access time
  ASSERT_EQ(::stat((dir_ + "/copy.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  EXPECT_EQ(st.st_mtime, 1234567890);
  EXPECT_EQ(st.st_atime, 1000000000);
  EXPECT_TRUE(Slurp(dir_ + "/copy.bin") == content) << "the copy differs from its source";
}

TEST_F(Sbcast, FromABatchScriptEveryNodeOfTheJobReadsIt) {
  Write(dir_ + "/hello.txt", "hello from the login host\n", 0644);
  const std::string copy = dir_ + "/hello-copy.txt";
  const unsigned long long id =
      Submit(*cluster_,
             {"-N2", "-t", "2", "-o", dir_ + "/out.txt", "--wrap",
              "sbcast " + dir_ + "/hello.txt " + copy + " && srun -N2 -l cat " + copy},
             dir_);
  ASSERT_GT(id, 0u);
  EXPECT_EQ(cluster_->WaitJob(id)["state"], "COMPLETED") << Slurp(dir_ + "/out.txt");
  const std::string out = Slurp(dir_ + "/out.txt");
  EXPECT_TRUE(Contains(out, "0: hello from the login host")) << out;
  EXPECT_TRUE(Contains(out, "1: hello from the login host")) << out;
}

TEST_F(Sbcast, AnExistingFileIsRefusedOnEveryNodeUnlessForced) {
  const std::string job = std::to_string(RunningJob());
  Write(dir_ + "/a.txt", "new", 0644);
  Write(dir_ + "/there.txt", "old", 0644);
  CommandResult r = RunSbcast({"-j", job, "a.txt", dir_ + "/there.txt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "sbcast: error: REQUEST_FILE_BCAST(node1): File exists")) << r.err;
  EXPECT_TRUE(Contains(r.err, "sbcast: error: REQUEST_FILE_BCAST(node2): File exists")) << r.err;
  EXPECT_EQ(Slurp(dir_ + "/there.txt"), "old");
  r = RunSbcast({"--force", "-j", job, "a.txt", "there.txt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Slurp(dir_ + "/there.txt"), "new");
}

TEST_F(Sbcast, AnOrdinaryUserMayNotCopyIntoAnotherUsersJob) {
  const std::string job = std::to_string(RunningJob());  // root's
  ::chmod(dir_.c_str(), 0777);
  Write(dir_ + "/mine.txt", "nobody's", 0644);
  CommandResult r = RunSbcast({"-j", job, "mine.txt", "into-roots-job.txt"}, kNobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "access/permission denied")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/into-roots-job.txt"));
}

TEST_F(Sbcast, ALinkTheUserPlantedIsNotFollowedIntoRootsFile) {
  const std::string job = std::to_string(RunningJob(kNobody));
  ::chmod(dir_.c_str(), 0777);  // nobody may create and replace names here (no sticky bit)
  Write(dir_ + "/roots.conf", "root's own\n", 0666);  // writable even: only a link leads there
  Write(dir_ + "/payload", "planted\n", 0644);
  const std::string link = dir_ + "/innocent";
  ASSERT_EQ(::symlink((dir_ + "/roots.conf").c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), kNobody, kNobody), 0);
  CommandResult r = RunSbcast({"-f", "-j", job, "payload", "innocent"}, kNobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "REQUEST_FILE_BCAST(node1): Too many levels of symbolic links"))
      << r.err;
  EXPECT_EQ(Slurp(dir_ + "/roots.conf"), "root's own\n");
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(Sbcast, ADirectoryTheUserCannotWriteStaysUnwritten) {
  const std::string job = std::to_string(RunningJob(kNobody));
  const std::string closed = dir_ + "/roots-only";
  ASSERT_EQ(::mkdir(closed.c_str(), 0755), 0);
  Write(dir_ + "/payload", "x", 0644);
  CommandResult r = RunSbcast({"-j", job, dir_ + "/payload", closed + "/file"}, kNobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "REQUEST_FILE_BCAST(node2): Permission denied")) << r.err;
  EXPECT_FALSE(fs::exists(closed + "/file"));
  // The same user's own job writes where the user may: into a directory of theirs.
  const std::string open = dir_ + "/nobodys";
  ASSERT_EQ(::mkdir(open.c_str(), 0755), 0);
  ASSERT_EQ(::chown(open.c_str(), kNobody, kNobody), 0);
  r = RunSbcast({"-j", job, dir_ + "/payload", open + "/file"}, kNobody);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat((open + "/file").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
}

TEST_F(Sbcast, OnlyARunningJobsNodesGetFiles) {
  const unsigned long long id = Submit(*cluster_, {"-t", "1", "--wrap", "true"}, dir_);
  ASSERT_GT(id, 0u);
  cluster_->WaitJob(id);
  Write(dir_ + "/f", "x", 0644);
  CommandResult r = RunSbcast({"-j", std::to_string(id), "f", "g"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "is not running")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/g"));
}

TEST_F(Sbcast, BadCommandLinesAreRefusedWithTheirReason) {
  Write(dir_ + "/f", "x", 0644);
  CommandResult r = RunSbcast({"-s", "-5", "-j", "1", "f", "g"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "--size=-5: size specification is invalid")) << r.err;
  r = RunSbcast({"--size=99999999999m", "-j", "1", "f", "g"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "size specification is invalid")) << r.err;
  r = RunSbcast({"--bogus", "f", "g"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "unrecognized option '--bogus'")) << r.err;
  r = RunSbcast({"-t", "soon", "-j", "1", "f", "g"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "--timeout=soon")) << r.err;
  r = RunSbcast({"-C", "-j", "1", "f"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "Need two file names, have 1 names")) << r.err;
  r = RunSbcast({"f", "g"});  // no job: neither -j nor SLURM_JOB_ID
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "Need a job id to run this command.")) << r.err;
  r = RunSbcast({"-j", "1", "f", "dir/"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "Target filename cannot be a directory.")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/g"));
}

TEST_F(Sbcast, AFileOverTheLimitIsRefusedBeforeAnythingIsSent) {
  const std::string job = std::to_string(RunningJob());
  const std::string big = dir_ + "/big";
  { std::ofstream(big) << ""; }
  fs::resize_file(big, (1ull << 30) + 1);  // sparse: no 1 GiB written
  CommandResult r = RunSbcast({"-j", job, "big", "big-copy"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "at most 1 GiB")) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/big-copy"));
  r = RunSbcast({"--send-libs", "-j", job, "no-such-file", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "sbcast: --send-libs has no effect in lockstep and is ignored"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "Can't open `no-such-file`: No such file or directory")) << r.err;
}

TEST_F(Sbcast, SrunBcastRunsTheCopiedProgramOnBothNodes) {
  Write(dir_ + "/prog.sh", "#!/bin/sh\necho \"ran $0 on $SLURMD_NODENAME\"\n", 0755);
  const std::string dest = dir_ + "/copied.sh";
  const unsigned long long id =
      Submit(*cluster_,
             {"-N2", "-t", "2", "-o", dir_ + "/out.txt", "--wrap",
              "srun -N2 --bcast=" + dest + " ./prog.sh && srun -N2 --bcast ./prog.sh"},
             dir_);
  ASSERT_GT(id, 0u);
  EXPECT_EQ(cluster_->WaitJob(id)["state"], "COMPLETED") << Slurp(dir_ + "/out.txt");
  const std::string out = Slurp(dir_ + "/out.txt");
  EXPECT_TRUE(Contains(out, "ran " + dest + " on node1")) << out;
  EXPECT_TRUE(Contains(out, "ran " + dest + " on node2")) << out;
  // Without DEST: slurm_bcast_<job>.<srun's pid>_<program> in the step's directory.
  const std::string prefix = "ran " + dir_ + "/slurm_bcast_" + std::to_string(id) + ".";
  EXPECT_TRUE(Contains(out, prefix)) << out;
  EXPECT_TRUE(Contains(out, "_prog.sh on node2")) << out;
}

}  // namespace
}  // namespace lockstep::testing
