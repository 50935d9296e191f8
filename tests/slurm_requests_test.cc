// End to end: Slurm's request options that issue 16 left last, through the real CLI against
// lockstepd and an agent. --cpus-per-gpu gives each node its GPUs times N CPUs (what the Slurm
// 22.05 peer's NumCPUs and SLURM_JOB_CPUS_PER_NODE show for the same command lines); -F and
// -w FILE read the node list from a file; --export-file adds the file's variables to the job's.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

class SlurmRequests : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new Cluster();  // 2 nodes of 16 CPUs and 4 GPUs
    ASSERT_TRUE(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // Submits `args`, waits for the job to end, and returns its output file.
  static std::string RunBatch(std::vector<std::string> args, unsigned long long* id_out = nullptr) {
    Cluster& c = *cluster_;
    const unsigned long long id = Submit(c, std::move(args));
    EXPECT_NE(id, 0u);
    if (id == 0) return "";
    if (id_out != nullptr) *id_out = id;
    EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
    return c.ReadFile("slurm-" + std::to_string(id) + ".out");
  }

  static void WriteWorkFile(const std::string& name, const std::string& text) {
    std::ofstream(cluster_->work() + "/" + name, std::ios::binary) << text;
  }

  static std::string ShowJob(unsigned long long id) {
    return cluster_->Run({"scontrol", "show", "job", std::to_string(id)}).out;
  }

  static Cluster* cluster_;
};
Cluster* SlurmRequests::cluster_ = nullptr;

constexpr char kCpuVars[] =
    "echo $SLURM_CPUS_ON_NODE $SLURM_JOB_CPUS_PER_NODE $SLURM_CPUS_PER_GPU $SLURM_GPUS_ON_NODE";

TEST_F(SlurmRequests, CpusPerGpuGivesEachNodeItsGpusTimesN) {
  unsigned long long id = 0;
  EXPECT_EQ(RunBatch({"--cpus-per-gpu=3", "--gpus-per-node=2", "--wrap", kCpuVars}, &id),
            "6 6 3 2\n");
  EXPECT_NE(ShowJob(id).find("NumCPUs=6 "), std::string::npos) << ShowJob(id);
  // -G over two nodes (2 GPUs each), and --gres=gpu:N, as the peer's 8(x2).
  EXPECT_EQ(RunBatch({"-N", "2", "-G", "4", "--cpus-per-gpu=4", "--wrap", kCpuVars}, &id),
            "8 8(x2) 4 2\n");
  EXPECT_NE(ShowJob(id).find("NumCPUs=16 "), std::string::npos) << ShowJob(id);
  EXPECT_EQ(RunBatch({"--gres=gpu:1", "--cpus-per-gpu=5", "--wrap", kCpuVars}), "5 5 5 1\n");
  // Tasks keep a CPU each when they are more than the GPUs' CPUs.
  EXPECT_EQ(RunBatch({"-n", "6", "--gpus-per-node=1", "--cpus-per-gpu=2", "--wrap", kCpuVars}),
            "6 6 2 1\n");
  // From the script too.
  WriteWorkFile("cpg.sbatch",
                std::string("#!/bin/sh\n#SBATCH --cpus-per-gpu=2 -G 3\n") + kCpuVars + "\n");
  EXPECT_EQ(RunBatch({"cpg.sbatch"}), "6 6 2 3\n");
}

TEST_F(SlurmRequests, CpusPerGpuIsPlacedAndRefusedByItsCpus) {
  Cluster& c = *cluster_;
  // 4 GPUs x 5 CPUs = 20 CPUs: more than a node's 16, so no node can take it.
  CommandResult r = c.Run({"sbatch", "--cpus-per-gpu=5", "--gpus-per-node=4", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("requested node configuration is not available"), std::string::npos)
      << r.err;
  // Without it the same GPUs fit.
  EXPECT_NE(Submit(c, {"--gpus-per-node=4", "--hold", "--wrap", "true"}), 0u);
}

TEST_F(SlurmRequests, CpusPerGpuWithCpusPerTaskIsRefusedAsSlurmDoes) {
  Cluster& c = *cluster_;
  const std::string before = c.Run({"squeue", "-h", "-o", "%i"}).out;
  CommandResult r = c.Run({"sbatch", "--cpus-per-gpu=2", "-c", "2", "-G", "1", "--wrap", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err, "sbatch: error: --cpus-per-gpu=2 is mutually exclusive with -c 2\n");
  EXPECT_EQ(c.Run({"squeue", "-h", "-o", "%i"}).out, before);  // nothing submitted
}

TEST_F(SlurmRequests, SrunAndSallocGetTheCpusOfTheirGpus) {
  Cluster& c = *cluster_;
  CommandResult r = c.Run({"srun", "--cpus-per-gpu=3", "-G", "1", "sh", "-c", kCpuVars});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "3 3 3 1\n");
  // salloc's command runs here with the allocation's variables; srun in it on the node.
  const std::string lockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  r = c.Run({"salloc", "-N", "2", "--cpus-per-gpu=2", "--gpus-per-node=2", "sh", "-c",
             "echo $SLURM_JOB_CPUS_PER_NODE $SLURM_CPUS_PER_GPU; '" + lockstep +
                 "' srun sh -c 'echo $SLURM_CPUS_ON_NODE $SLURM_CPUS_PER_GPU'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "4(x2) 2\n4 2\n4 2\n");  // one task on each node
}

TEST_F(SlurmRequests, NodefileAndWithASlashReadTheNodeList) {
  WriteWorkFile("nodes", "# the second one\nnode2\n");
  unsigned long long id = 0;
  EXPECT_EQ(RunBatch({"-F", "nodes", "--wrap", "echo $SLURM_JOB_NODELIST"}, &id), "node2\n");
  EXPECT_NE(ShowJob(id).find("ReqNodeList=node2"), std::string::npos) << ShowJob(id);
  EXPECT_EQ(RunBatch({"-w", "./nodes", "--wrap", "echo $SLURM_JOB_NODELIST"}), "node2\n");
  WriteWorkFile("both", "node1 node2\n");
  EXPECT_EQ(RunBatch({"--nodefile=both", "--wrap", "echo $SLURM_JOB_NODELIST"}), "node[1-2]\n");
  CommandResult r = cluster_->Run({"srun", "-F", "nodes", "sh", "-c", "echo $SLURMD_NODENAME"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "node2\n");
}

TEST_F(SlurmRequests, BadNodeFilesAreErrorsNamingThemAndSubmitNothing) {
  Cluster& c = *cluster_;
  const std::string before = c.Run({"squeue", "-h", "-o", "%i"}).out;
  CommandResult r = c.Run({"sbatch", "-F", "missing", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_EQ(r.err, "sbatch: error: -F: unable to open file " + c.work() + "/missing\n");
  WriteWorkFile("empty", "\n");
  r = c.Run({"sbatch", "--nodefile=empty", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_EQ(r.err, "sbatch: error: --nodefile: 'empty' names no node\n");
  WriteWorkFile("unknown", "node9\n");
  r = c.Run({"sbatch", "-F", "unknown", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "sbatch: error: Batch job submission failed: invalid node name specified: node9\n");
  // Nothing was queued: every job listed now was listed before (earlier tests' jobs may have
  // ended meanwhile).
  std::istringstream now(c.Run({"squeue", "-h", "-o", "%i"}).out);
  for (std::string id; std::getline(now, id);)
    EXPECT_NE(("\n" + before).find("\n" + id + "\n"), std::string::npos)
        << "job " << id << " was queued";
}

TEST_F(SlurmRequests, ExportFileVariablesReachTheJobAsExportSays) {
  WriteWorkFile("vars", "FROM_FILE=yes\nSHARED=file\n");
  WriteWorkFile("vars0", std::string("MULTI=a b\0OTHER=2\0", 18));
  const std::map<std::string, std::string> env = {{"SHARED", "submitter"}};
  const std::string echo = "echo $FROM_FILE $SHARED";
  Cluster& c = *cluster_;
  CommandResult r =
      c.Run({"sbatch", "--parsable", "--export-file=vars", "--wrap", echo}, "", -1, "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long id = std::stoull(r.out);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(id) + ".out"), "yes file\n");
  EXPECT_EQ(RunBatch({"--export-file=vars0", "--wrap", "echo $MULTI $OTHER"}), "a b 2\n");
  EXPECT_EQ(RunBatch({"--export-file=vars", "--export=ALL,SHARED=cmd", "--wrap", echo}),
            "yes cmd\n");
  r = c.Run({"sbatch", "--export-file=nope", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_EQ(r.err, "sbatch: error: --export-file: unable to open file " + c.work() + "/nope\n");
}

}  // namespace
}  // namespace lockstep::testing
