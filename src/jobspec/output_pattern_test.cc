#include "jobspec/output_pattern.h"

#include <gtest/gtest.h>

namespace lockstep::jobspec {
namespace {

OutputPatternVars Job() {
  OutputPatternVars v;
  v.job_id = 128;
  v.array_job_id = 0;
  v.job_name = "train";
  v.user = "alice";
  v.node = "gpu001";
  v.node_id = 3;
  v.task_id = 7;
  v.step_id = kBatchStepId;
  v.restart_count = 2;
  return v;
}

OutputPatternVars ArrayTask() {
  OutputPatternVars v = Job();
  v.job_id = 140;
  v.array_job_id = 128;
  v.array_task_id = 12;
  v.is_array = true;
  return v;
}

TEST(OutputPatternTest, Defaults) {
  EXPECT_EQ(DefaultOutputPattern(false), "slurm-%j.out");
  EXPECT_EQ(DefaultOutputPattern(true), "slurm-%A_%a.out");
  EXPECT_EQ(ExpandOutputPattern(DefaultOutputPattern(false), Job()), "slurm-128.out");
  EXPECT_EQ(ExpandOutputPattern(DefaultOutputPattern(true), ArrayTask()), "slurm-128_12.out");
}

TEST(OutputPatternTest, EveryLetter) {
  EXPECT_EQ(ExpandOutputPattern("%j %x %u %N %n %t %r %%", Job()),
            "128 train alice gpu001 3 7 2 %");
  EXPECT_EQ(ExpandOutputPattern("%A %a %b", ArrayTask()), "128 12 2");
}

TEST(OutputPatternTest, OutsideAnArray) {
  // %A is the job id and %a Slurm's NO_VAL; %b is NO_VAL modulo 10, as in Slurm.
  EXPECT_EQ(ExpandOutputPattern("%A_%a_%b", Job()), "128_4294967294_4");
}

TEST(OutputPatternTest, StepIds) {
  OutputPatternVars v = Job();
  EXPECT_EQ(ExpandOutputPattern("%J %s", v), "128 batch");
  v.step_id = 0;
  EXPECT_EQ(ExpandOutputPattern("%J %s", v), "128.0 0");
  v.step_id = 3;
  EXPECT_EQ(ExpandOutputPattern("%J-%2s", v), "128.3-03");
}

TEST(OutputPatternTest, ZeroPadding) {
  EXPECT_EQ(ExpandOutputPattern("job%4j.out", Job()), "job0128.out");
  EXPECT_EQ(ExpandOutputPattern("job%2j.out", Job()), "job128.out");
  EXPECT_EQ(ExpandOutputPattern("%12j", Job()), "0000000128");  // at most 10 digits
  EXPECT_EQ(ExpandOutputPattern("%3a-%3t-%3n", ArrayTask()), "012-007-003");
  EXPECT_EQ(ExpandOutputPattern("%5x", Job()), "train");  // names are not padded
}

TEST(OutputPatternTest, BackslashTurnsSubstitutionOff) {
  EXPECT_EQ(ExpandOutputPattern("slurm\\%j.out", Job()), "slurm%j.out");
  EXPECT_EQ(ExpandOutputPattern("%x\\_%j", Job()), "%x_%j");
}

TEST(OutputPatternTest, UnknownLettersAndTrailingPercentStay) {
  EXPECT_EQ(ExpandOutputPattern("a%Zb%5Q", Job()), "a%Zb%5Q");
  EXPECT_EQ(ExpandOutputPattern("out%", Job()), "out%");
  EXPECT_EQ(ExpandOutputPattern("out%12", Job()), "out%12");
}

TEST(OutputPatternTest, PathsStayAsWritten) {
  EXPECT_EQ(ExpandOutputPattern("logs/%x/%j.out", Job()), "logs/train/128.out");
  EXPECT_EQ(ExpandOutputPattern("/abs/%u.log", Job()), "/abs/alice.log");
  EXPECT_EQ(ExpandOutputPattern("", Job()), "");
}

}  // namespace
}  // namespace lockstep::jobspec
