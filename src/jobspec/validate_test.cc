// Validate: the numbers of issue 17 that wrapped (-2 CPUs, 0 GPUs) are refused with a message
// naming the options, through the sbatch and srun parsers as a user meets them and directly.
#include "jobspec/validate.h"

#include <gtest/gtest.h>

#include "jobspec/sbatch_test_util.h"

namespace lockstep::jobspec {
namespace {

using testing::SbatchFixture;

constexpr Limits kUser{.caller_is_operator = false};
constexpr Limits kOperator{.caller_is_operator = true};

JobSpec Spec() {
  JobSpec s;
  s.script = "#!/bin/sh\n";
  return s;
}

std::string ErrorOf(const JobSpec& s, const Limits& l = kUser) {
  Status st = Validate(s, l);
  return st.ok() ? "" : st.message();
}

class ValidateSbatchTest : public SbatchFixture {};

// What decides what runs, and where, must reach the node as written (validate.h).
TEST_F(ValidateSbatchTest, TextThatIsNotUtf8IsRefusedNamingTheOption) {
  EXPECT_EQ(Error({"--wrap", "echo caf\xe9"}),
            "sbatch: the batch script is not UTF-8 (line 2: byte 0xe9 at offset 18)");
  files[in.cwd + "/run.sh"] = "#!/bin/sh\n";
  EXPECT_EQ(Error({"run.sh", "ok", "caf\xe9"}),
            "sbatch: the script's argument 2 is not UTF-8 (byte 0xe9 at offset 3)");
  EXPECT_EQ(Error({"-D", "/data/caf\xe9", "--wrap", "true"}),
            "sbatch: --chdir=/data/caf\xef\xbf\xbd is not UTF-8 (byte 0xe9 at offset 9)");
  EXPECT_EQ(Error({"-o", "caf\xe9.out", "--wrap", "true"}),
            "sbatch: --output=caf\xef\xbf\xbd.out is not UTF-8 (byte 0xe9 at offset 3)");
  EXPECT_EQ(Error({"-w", "caf\xe9", "--wrap", "true"}),
            "sbatch: --nodelist=caf\xef\xbf\xbd is not UTF-8 (byte 0xe9 at offset 3)");
  EXPECT_EQ(Error({"-x", "n\xe9", "--wrap", "true"}),
            "sbatch: --exclude=n\xef\xbf\xbd is not UTF-8 (byte 0xe9 at offset 1)");
}

TEST(ValidateTest, TheEnvironmentMayHoldBytesThatAreNotUtf8) {
  JobSpec s = Spec();
  s.environment["LEGACY"] = "caf\xe9";
  EXPECT_EQ(ErrorOf(s), "");
}

TEST_F(ValidateSbatchTest, RegressionCpusPerTaskTimesTasksDoesNotWrapToNegative) {
  EXPECT_EQ(Error({"-n", "2147483647", "--cpus-per-task", "2", "--wrap", "true"}),
            "sbatch: --ntasks=2147483647 with --cpus-per-task=2 asks for 4294967294 CPUs, more "
            "than 2147483647");
}

TEST_F(ValidateSbatchTest, RegressionGpusPerTaskTimesTasksDoesNotWrapToZero) {
  EXPECT_EQ(Error({"--gpus-per-task", "1073741824", "-n", "4", "--wrap", "true"}),
            "sbatch: --gpus-per-task=1073741824 with --ntasks=4 asks for 4294967296 GPUs, more "
            "than 2147483647");
}

TEST_F(ValidateSbatchTest, TasksPerNodeTimesNodesIsChecked) {
  EXPECT_EQ(Error({"-N", "65536", "--ntasks-per-node", "65536", "--wrap", "true"}),
            "sbatch: --nodes=65536 with --ntasks-per-node=65536 asks for 4294967296 tasks, more "
            "than 2147483647");
}

TEST_F(ValidateSbatchTest, TasksRoundedUpPerNodeStayInRange) {
  EXPECT_EQ(Error({"-n", "2147483647", "-N", "2", "--wrap", "true"}),
            "sbatch: --ntasks=2147483647 with --nodes=2 asks for more than 2147483647 tasks and "
            "nodes together");
  EXPECT_EQ(Ok({"-n", "2147483646", "-N", "2", "--wrap", "true"}).ntasks, 2147483646);
}

TEST(ValidateTest, GpusRoundedUpPerNodeStayInRange) {
  JobSpec s = Spec();
  s.gpus = std::numeric_limits<std::int32_t>::max();
  s.min_nodes = 2;
  EXPECT_EQ(ErrorOf(s),
            "--gpus=2147483647 with --nodes=2 asks for more than 2147483647 GPUs and nodes "
            "together");
}

TEST_F(ValidateSbatchTest, MemoryPerCpuTimesCpusIsChecked) {
  std::string e = Error({"-n", "1048576", "--mem-per-cpu", "1048576T", "--wrap", "true"});
  EXPECT_NE(e.find("sbatch: --mem-per-cpu="), std::string::npos) << e;
}

TEST_F(ValidateSbatchTest, OrdinaryLargeJobsPass) {
  JobSpec s = Ok({"-N", "512", "--ntasks-per-node", "8", "-c", "12", "--gpus-per-task", "1",
                  "--mem-per-cpu", "8G", "--wrap", "true"});
  EXPECT_EQ(s.min_nodes, 512);
  // The CLI leaves the sign of nice to lockstepd, which knows its operators.
  EXPECT_EQ(Ok({"--nice=-5", "--wrap", "true"}).nice, -5);
}

TEST(ValidateTest, SignalOutOfRangeFromTheApi) {
  JobSpec s;
  s.script = "#!/bin/sh\n";
  s.signal_number = 65;
  EXPECT_FALSE(Validate(s, Limits{}).ok());
  s.signal_number = 10;
  s.signal_time = -1;
  EXPECT_FALSE(Validate(s, Limits{}).ok());
  s.signal_time = 90;
  EXPECT_TRUE(Validate(s, Limits{}).ok()) << Validate(s, Limits{}).message();
}

TEST(ValidateSrunTest, ProductsAreCheckedForSrunToo) {
  Result<SrunParse> p = ParseSrunArgs({"-n", "2147483647", "-c", "2", "hostname"}, {}, "/", 0);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "srun: --ntasks=2147483647 with --cpus-per-task=2 asks for 4294967294 CPUs, more than "
            "2147483647");
}

// srun's command goes to the nodes in JSON too, which cannot hold such bytes: srun used to fail
// writing the step's request (an exception out of nlohmann::json::dump).
TEST(ValidateSrunTest, ACommandThatIsNotUtf8IsRefused) {
  Result<SrunParse> p = ParseSrunArgs({"-n", "2", "cat", "caf\xe9.txt"}, {}, "/", 0);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "srun: word 2 of the command is not UTF-8 (byte 0xe9 at offset 3)");
}

TEST(ValidateTest, NegativeCountsFromTheApiAreRefused) {
  JobSpec s = Spec();
  s.cpus_per_task = -2;
  EXPECT_EQ(ErrorOf(s), "--cpus-per-task=-2: must not be negative");
  s = Spec();
  s.gpus = -1;
  EXPECT_EQ(ErrorOf(s), "--gpus=-1: must not be negative");
  s = Spec();
  s.mem_mb = -1;
  EXPECT_EQ(ErrorOf(s), "--mem=-1M: must not be negative");
  s = Spec();
  s.time_limit = -60;
  EXPECT_EQ(ErrorOf(s), "--time: -60 seconds is negative");
  s = Spec();
  s.min_nodes = 4;
  s.max_nodes = 2;
  EXPECT_EQ(ErrorOf(s), "--nodes=4-2: the minimum is above the maximum");
}

TEST(ValidateTest, NiceIsInSlurmsRangeAndNegativeOnlyForOperators) {
  JobSpec s = Spec();
  s.nice = -10000;
  Status st = Validate(s, kUser);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(st.message(), "--nice=-10000: only an operator may give a negative nice");
  EXPECT_TRUE(Validate(s, kOperator).ok());
  s.nice = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(ErrorOf(s, kOperator),
            "--nice=-2147483648: invalid nice value, must be between -2147483645 and 2147483645");
  s.nice = 2147483646;
  EXPECT_NE(ErrorOf(s, kUser), "");
  s.nice = 2147483645;
  EXPECT_EQ(ErrorOf(s, kUser), "");
}

TEST(ValidateTest, ArraysUpToSlurmsMaximum) {
  JobSpec s = Spec();
  s.array = ArraySpec{{0, kMaxArrayIndex}, 0, "0,4000000"};
  EXPECT_EQ(ErrorOf(s), "");
  s.array->indices = {0, kMaxArrayIndex + 1};
  s.array->text = "0,4000001";
  EXPECT_EQ(ErrorOf(s),
            "--array=0,4000001: invalid job array specification: index 4000001 is above the "
            "maximum 4000000");
  s.array->indices = {3, 3};
  EXPECT_NE(ErrorOf(s).find("ascending and unique"), std::string::npos);
  s.array->indices.clear();
  EXPECT_NE(ErrorOf(s).find("no index"), std::string::npos);
}

TEST(ValidateTest, TimesAndDependencies) {
  JobSpec s = Spec();
  s.time_limit = kUnlimited;
  EXPECT_EQ(ErrorOf(s), "");
  s.time_limit = kMaxTimeLimit + 60;
  EXPECT_NE(ErrorOf(s).find("--time: "), std::string::npos);
  s = Spec();
  s.begin_time = -1;
  EXPECT_EQ(ErrorOf(s), "--begin: -1 is not a time");
  s = Spec();
  s.dependencies = {{DependencyType::kAfterOk, 0, 0, false}};
  EXPECT_EQ(ErrorOf(s), "--dependency: job dependency problem: job id 0 is not a job");
}

TEST(ValidateTest, GpusPerNodeTimesNodesAndMemoryPerGpu) {
  JobSpec s = Spec();
  s.min_nodes = 2;
  s.gpus_per_node = 1 << 30;
  EXPECT_EQ(ErrorOf(s),
            "--gpus-per-node=1073741824 with --nodes=2 asks for 2147483648 GPUs, more than "
            "2147483647");
  s = Spec();
  s.gpus_per_node = 8;
  s.mem_per_gpu_mb = kMaxMemoryMb;
  EXPECT_EQ(ErrorOf(s),
            "--mem-per-gpu=1099511627776M with 8 GPUs on a node asks for more than "
            "1099511627776M");
  s = Spec();
  s.min_nodes = 1024;
  s.mem_mb = kMaxMemoryMb / 512;
  EXPECT_EQ(ErrorOf(s), "--mem=2147483648M on 1024 nodes asks for more than 1099511627776M");
}

// Issue 27: a 15 MB name, a 16 MB script or environment were kept; each is refused at its
// limit with Slurm's words and the limit's name, one byte over and not at it.
TEST(ValidateTest, TextAboveTheClustersLimitsIsRefusedNamingTheLimit) {
  const Limits limits{.max_name_length = 1024, .max_script_size = 4096, .max_env_size = 64};
  JobSpec s = Spec();
  s.name = std::string(1024, 'n');
  s.script = std::string(4096, '#');
  s.environment = {{"HOME", "/root"}};  // 11 bytes with '=' and NUL
  EXPECT_EQ(ErrorOf(s, limits), "");
  s.name += "n";
  EXPECT_EQ(ErrorOf(s, limits),
            "Pathname of a file, directory or other parameter too long: the job name is 1025 "
            "bytes, more than max_name_length=1024");
  s.name = "ok";
  s.script += "\n";
  EXPECT_EQ(ErrorOf(s, limits),
            "Pathname of a file, directory or other parameter too long: the batch script is "
            "4097 bytes, more than max_script_size=4096");
  s.script = "#!/bin/sh\n";
  s.script_args = {std::string(4095, 'a')};  // 4096 with its NUL
  EXPECT_EQ(ErrorOf(s, limits), "");
  s.script_args.push_back("");
  EXPECT_NE(ErrorOf(s, limits).find("the script's arguments is 4097 bytes"), std::string::npos);
  s.script_args.clear();
  s.environment["BIG"] = std::string(50, 'x');  // 11 + 55 = 66
  EXPECT_EQ(EnvironmentSize(s.environment), 66u);
  EXPECT_EQ(ErrorOf(s, limits),
            "Pathname of a file, directory or other parameter too long: the job's environment "
            "is 66 bytes, more than max_env_size=64");
}

TEST(ValidateTest, SlurmsFixedTextLimitsHoldWithoutClusterLimits) {
  JobSpec s = Spec();
  s.name = std::string(5 << 20, 'n');  // the CLI does not know the cluster's limits
  EXPECT_EQ(ErrorOf(s), "");
  s.constraint = std::string(1025, 'a');
  EXPECT_EQ(ErrorOf(s),
            "Pathname of a file, directory or other parameter too long: --constraint is 1025 "
            "bytes, more than 1024");
  s.constraint.clear();
  s.work_dir = "/" + std::string(4096, 'd');
  EXPECT_NE(ErrorOf(s).find("--chdir is 4097 bytes, more than 4096"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::jobspec
