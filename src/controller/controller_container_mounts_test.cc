// sbatch --container-mounts at submission: only directories on a declared file system the job's
// partition gets, only where jobs run in images; what is accepted reaches the launch, read-only
// where the storage is. And the warning for a job whose directory is on no declared storage.
#include <gtest/gtest.h>

#include <fstream>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

constexpr char kCluster[] = R"(backend: kubernetes
partitions:
  - {name: gpu, nodes: ALL, default: true}
  - {name: cpu, nodes: ALL}
storage:
  - {name: imagenet, category: /mnt/datasets, bind: /srv/imagenet, read_only: true}
  - {name: ckpt, category: /mnt/checkpoints, bind: /srv/ckpt, partitions: [cpu]}
  - {name: home, host_path: /shared/home}
)";

class ContainerMountsTest : public testing::ControllerTest {
 protected:
  void SetUp() override { StartWith(/*images=*/true); }

  void StartWith(bool images) {
    std::ofstream(dir_.File("cluster.yaml")) << kCluster;
    backend_.images = images;
    Start();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }

  Result<JobId> Submit(const std::string& mounts, const std::string& partition = "") {
    jobspec::JobSpec s = Spec(8);
    s.work_dir = "/shared/home/alice/project";
    s.container_mounts = mounts;
    s.partition = partition;
    return controller_->Submit(kAlice, s);
  }

  std::string Refusal(const std::string& mounts, const std::string& partition = "") {
    Result<JobId> id = Submit(mounts, partition);
    EXPECT_FALSE(id.ok()) << mounts;
    return id.ok() ? "" : id.status().message();
  }
};

TEST_F(ContainerMountsTest, DeclaredDirectoriesReachTheLaunchReadOnlyWhereTheStorageIs) {
  Result<JobId> id = Submit("/mnt/datasets/imagenet/train:/data:rw,/shared/home/alice:/work");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  controller_->PassForTest();
  std::vector<backend::LaunchOrder> launches = backend_.Launches();
  ASSERT_EQ(launches.size(), 1u);
  const std::vector<backend::BindMount>& m = launches[0].container_mounts;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].source, "/mnt/datasets/imagenet/train");
  EXPECT_EQ(m[0].target, "/data");
  EXPECT_TRUE(m[0].read_only);  // the file system is read-only, whatever the flag says
  EXPECT_EQ(m[1].source, "/shared/home/alice");
  EXPECT_EQ(m[1].target, "/work");
  EXPECT_FALSE(m[1].read_only);
}

TEST_F(ContainerMountsTest, AnythingElseIsRefusedByNameAndNothingIsQueued) {
  EXPECT_EQ(Refusal("/etc:/etc2"),
            "--container-mounts: /etc is not on a declared file system; only those are mounted "
            "into jobs (lockstep storage lists them)");
  // A sibling whose name starts like a declared path is not on it.
  EXPECT_EQ(Refusal("/mnt/datasets/imagenet2:/d"),
            "--container-mounts: /mnt/datasets/imagenet2 is not on a declared file system; only "
            "those are mounted into jobs (lockstep storage lists them)");
  // The category's parent itself is not a file system.
  EXPECT_EQ(Refusal("/mnt/datasets:/d"),
            "--container-mounts: /mnt/datasets is not on a declared file system; only those are "
            "mounted into jobs (lockstep storage lists them)");
  EXPECT_EQ(Refusal("/mnt/checkpoints/ckpt:/c"),
            "--container-mounts: /mnt/checkpoints/ckpt is on checkpoints/ckpt, which partition "
            "gpu does not get");
  EXPECT_EQ(Refusal("/shared/home/alice:/mnt/datasets"),
            "--container-mounts: /mnt/datasets is where job pods see the shared storage already; "
            "choose another target");
  EXPECT_EQ(Refusal("/mnt/datasets/imagenet/../../../etc:/e"),
            "--container-mounts: \"/mnt/datasets/imagenet/../../../etc:/e\": the source must be "
            "an absolute path without . or .. components");
  EXPECT_TRUE(Submit("/mnt/checkpoints/ckpt:/c", "cpu").ok());
  controller_->PassForTest();
  EXPECT_EQ(backend_.Launches().size(), 1u);  // only the one accepted
}

TEST_F(ContainerMountsTest, AJobOutsideTheStorageIsWarnedAndStillAccepted) {
  jobspec::JobSpec s = Spec(8);
  s.work_dir = "/home/alice/project";
  EXPECT_EQ(controller_->SubmitWarnings(s),
            std::vector<std::string>{
                "/home/alice/project is not on a declared file system (lockstep storage): the job "
                "runs in its image's directory and its output goes to its pods' logs (lockstep "
                "logs)"});
  EXPECT_TRUE(controller_->Submit(kAlice, s).ok());
  s.work_dir = "/shared/home/alice/project";
  EXPECT_TRUE(controller_->SubmitWarnings(s).empty());
}

class ContainerMountsOnHostsTest : public ContainerMountsTest {
 protected:
  void SetUp() override { StartWith(/*images=*/false); }
};

TEST_F(ContainerMountsOnHostsTest, JobsOnHostsAreNeitherMountedIntoNorWarned) {
  EXPECT_EQ(Refusal("/shared/home/alice:/work"),
            "--container-mounts: this cluster's jobs run on its hosts, not in containers; they "
            "see the declared file systems at their own paths (lockstep storage)");
  jobspec::JobSpec s = Spec(8);
  s.work_dir = "/home/alice/project";
  EXPECT_TRUE(controller_->SubmitWarnings(s).empty());
}

}  // namespace
}  // namespace lockstep::controller
