// --cpus-per-gpu: parsed from the three places, refused with -c as Slurm 22.05 refuses it, and
// turned into the CPUs each node gives the job (the figures the Slurm peer's NumCPUs shows).
#include "jobspec/cpus_per_gpu.h"

#include <gtest/gtest.h>

#include "jobspec/sbatch_test_util.h"
#include "jobspec/validate.h"

namespace lockstep::jobspec {
namespace {

using testing::kNow;
using testing::SbatchFixture;

constexpr char kPlain[] = "#!/bin/sh\ntrue\n";

class CpusPerGpuTest : public SbatchFixture {};

TEST_F(CpusPerGpuTest, ParsedFromTheCommandLineTheScriptAndTheEnvironment) {
  EXPECT_EQ(Ok({"--cpus-per-gpu=4", "--gpus-per-node=2", Script(kPlain)}).cpus_per_gpu, 4);
  EXPECT_EQ(Ok({Script("#!/bin/sh\n#SBATCH --cpus-per-gpu 6\ntrue\n")}).cpus_per_gpu, 6);
  in.env["SBATCH_CPUS_PER_GPU"] = "3";
  EXPECT_EQ(Ok({Script(kPlain)}).cpus_per_gpu, 3);
  EXPECT_EQ(Ok({"--cpus-per-gpu=5", Script(kPlain)}).cpus_per_gpu, 5);  // the command line wins
  EXPECT_TRUE(Ok({"--cpus-per-gpu=5", Script(kPlain)}).warnings.empty());
}

TEST_F(CpusPerGpuTest, BadValuesNameTheOption) {
  EXPECT_EQ(Error({"--cpus-per-gpu=0", Script(kPlain)}),
            "sbatch: --cpus-per-gpu: '0' is not a positive integer");
  EXPECT_EQ(Error({"--cpus-per-gpu=x", Script(kPlain)}),
            "sbatch: --cpus-per-gpu: 'x' is not a positive integer");
}

// Slurm 22.05: "--cpus-per-gpu is mutually exclusive with --cpus-per-task", from any places.
TEST_F(CpusPerGpuTest, MutuallyExclusiveWithCpusPerTaskFromAnyPlace) {
  EXPECT_EQ(Error({"--cpus-per-gpu=4", "-c", "2", Script(kPlain)}),
            "sbatch: --cpus-per-gpu=4 is mutually exclusive with -c 2");
  EXPECT_EQ(Error({"--cpus-per-gpu=4", Script("#!/bin/sh\n#SBATCH -c 2\ntrue\n")}),
            "sbatch: --cpus-per-gpu=4 is mutually exclusive with #SBATCH -c 2 (train.sbatch line "
            "2)");
  in.env["SBATCH_CPUS_PER_GPU"] = "3";
  EXPECT_EQ(Error({"--cpus-per-task=2", Script(kPlain)}),
            "sbatch: SBATCH_CPUS_PER_GPU=3 is mutually exclusive with --cpus-per-task=2");
  // And through the API, whose specs are not parsed from options.
  JobSpec api;
  api.cpus_per_gpu = 2;
  api.cpus_per_task = 2;
  api.script = kPlain;
  EXPECT_EQ(Validate(api, Limits{}).message(),
            "--cpus-per-gpu=2 is mutually exclusive with --cpus-per-task=2");
}

TEST_F(CpusPerGpuTest, SrunAndSallocTakeItToo) {
  Result<SrunParse> p = ParseSrunArgs({"--cpus-per-gpu=2", "-G", "1", "true"}, {}, "/w", kNow);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->spec.cpus_per_gpu, 2);
  EXPECT_FALSE(ParseSrunArgs({"--cpus-per-gpu=2", "-c", "1", "true"}, {}, "/w", kNow).ok());
}

JobSpec Spec(std::int32_t cpus_per_gpu) {
  JobSpec s;
  s.cpus_per_gpu = cpus_per_gpu;
  return s;
}

// The figures of the Slurm 22.05 peer's `scontrol show job` NumCPUs and SLURM_JOB_CPUS_PER_NODE
// for the same options (docs/commands.md, "sbatch").
TEST(CpusForGpus, EachNodeGetsItsGpusTimesTheCount) {
  JobSpec s = Spec(4);
  s.gpus_per_node = 2;  // --gpus-per-node=2 (or --gres=gpu:2): 8 CPUs on each node
  EXPECT_EQ(CpusForGpus(s, 1, 1)->cpus_per_node, 8);
  EXPECT_EQ(CpusForGpus(s, 2, 2)->cpus_per_node, 8);
  EXPECT_EQ(CpusForGpus(s, 2, 2)->gpus_per_node, 2);

  JobSpec total = Spec(4);
  total.gpus = 3;  // -G 3 on one node: 12 CPUs
  EXPECT_EQ(CpusForGpus(total, 1, 1)->cpus_per_node, 12);
  EXPECT_EQ(CpusForGpus(total, 1, 1)->gpus_per_node, 3);

  JobSpec per_task = Spec(3);
  per_task.gpus_per_task = 2;
  per_task.ntasks = 4;  // two tasks on each of 2 nodes, 4 GPUs each: 12 CPUs
  EXPECT_EQ(CpusForGpus(per_task, 2, 4)->gpus_per_node, 4);
  EXPECT_EQ(CpusForGpus(per_task, 2, 4)->cpus_per_node, 12);
}

TEST(CpusForGpus, TasksKeepACpuEachWhenTheyAreMore) {
  JobSpec s = Spec(2);
  s.gpus_per_node = 2;
  s.ntasks = 12;  // -n 12: 12 CPUs, not 4
  EXPECT_EQ(CpusForGpus(s, 1, 12)->cpus_per_node, 12);
  s.ntasks = 3;  // -n 3 --cpus-per-gpu=4: 8
  s.cpus_per_gpu = 4;
  EXPECT_EQ(CpusForGpus(s, 1, 3)->cpus_per_node, 8);
}

TEST(CpusForGpus, NoEffectWithoutGpusOrWithoutTheOption) {
  EXPECT_FALSE(CpusForGpus(Spec(4), 1, 1).has_value());
  JobSpec gpus_only;
  gpus_only.gpus_per_node = 2;
  EXPECT_FALSE(CpusForGpus(gpus_only, 1, 1).has_value());
}

TEST(CpusForGpus, ValidateRefusesProductsBeyondTheCeiling) {
  JobSpec s = Spec(static_cast<std::int32_t>(kMaxResourceCount));
  s.gpus_per_node = 2;
  s.script = kPlain;
  EXPECT_NE(Validate(s, Limits{}).message().find("--cpus-per-gpu="), std::string::npos);
}

}  // namespace
}  // namespace lockstep::jobspec
