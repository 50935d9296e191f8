#include "cli/format/scontrol_steps.h"

#include <gtest/gtest.h>

#include "cli/format/format_test_data.h"

namespace lockstep::cli {
namespace {

// A running job with its batch step, a running srun step and one that ended; an array's
// running task; a pending job. As GET /api/v1/jobs answers them (docs/api.md).
const nlohmann::json kJobs = nlohmann::json::parse(R"({"jobs": [
  {"job_id": 42, "uid": 1000, "partition": "gpu", "state": "RUNNING", "steps": [
    {"step_id": "batch", "name": "batch", "state": "RUNNING", "start_time": 1764403000,
     "nodes": "node1", "cpus": 8, "mem_mb": 4096, "gpus": 2},
    {"step_id": 0, "name": "python", "state": "RUNNING", "start_time": 1764403060,
     "nodes": "node[1-2]", "ntasks": 4, "cpus": 16, "mem_mb": 8192, "gpus": 4,
     "srun_host": "node1", "srun_pid": 4242},
    {"step_id": 1, "name": "hostname", "state": "COMPLETED", "start_time": 1764403030,
     "nodes": "node1", "ntasks": 1, "cpus": 8}]},
  {"job_id": 51, "array_job_id": 40, "array_task_id": 2, "uid": 1001, "partition": "cpu",
   "state": "RUNNING", "steps": [
    {"step_id": "batch", "name": "batch", "state": "RUNNING", "start_time": 1764403300,
     "nodes": "cpu7", "cpus": 2}]},
  {"job_id": 60, "uid": 1000, "partition": "gpu", "state": "PENDING", "steps": []}]})");

class ScontrolShowSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
};

TEST_F(ScontrolShowSteps, RunningStepsAsSlurm2205PrintsThem) {
  Result<std::string> text = FormatScontrolShowSteps(kJobs, "", {false, testdata::kNow});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "StepId=42.batch UserId=1000 StartTime=2025-11-29T07:56:40 TimeLimit=UNLIMITED\n"
            "   State=RUNNING Partition=gpu NodeList=node1\n"
            "   Nodes=1 CPUs=8 Tasks=1 Name=batch Network=(null)\n"
            "   TRES=cpu=8,mem=4G,node=1,gres/gpu=2\n"
            "   ResvPorts=(null)\n"
            "   CPUFreqReq=Default\n"
            "   SrunHost:Pid=(null):0\n"
            "\n"
            "StepId=42.0 UserId=1000 StartTime=2025-11-29T07:57:40 TimeLimit=UNLIMITED\n"
            "   State=RUNNING Partition=gpu NodeList=node[1-2]\n"
            "   Nodes=2 CPUs=16 Tasks=4 Name=python Network=(null)\n"
            "   TRES=cpu=16,mem=8G,node=2,gres/gpu=4\n"
            "   ResvPorts=(null)\n"
            "   CPUFreqReq=Default Dist=Block\n"
            "   SrunHost:Pid=node1:4242\n"
            "\n"
            "StepId=40_2.batch UserId=1001 StartTime=2025-11-29T08:01:40 TimeLimit=UNLIMITED\n"
            "   State=RUNNING Partition=cpu NodeList=cpu7\n"
            "   Nodes=1 CPUs=2 Tasks=1 Name=batch Network=(null)\n"
            "   TRES=cpu=2,node=1\n"
            "   ResvPorts=(null)\n"
            "   CPUFreqReq=Default\n"
            "   SrunHost:Pid=(null):0\n"
            "\n");
}

TEST_F(ScontrolShowSteps, OneStepOfAJobOnOneLine) {
  Result<std::string> text = FormatScontrolShowSteps(kJobs["jobs"][0], "0", {true, testdata::kNow});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            "StepId=42.0 UserId=1000 StartTime=2025-11-29T07:57:40 TimeLimit=UNLIMITED "
            "State=RUNNING Partition=gpu NodeList=node[1-2] Nodes=2 CPUs=16 Tasks=4 Name=python "
            "Network=(null) TRES=cpu=16,mem=8G,node=2,gres/gpu=4 ResvPorts=(null) "
            "CPUFreqReq=Default Dist=Block SrunHost:Pid=node1:4242\n");
}

TEST_F(ScontrolShowSteps, EndedPendingAndUnknownStepsPrintNothing) {
  EXPECT_EQ(*FormatScontrolShowSteps(kJobs["jobs"][0], "1", {}), "");  // it has ended
  EXPECT_EQ(*FormatScontrolShowSteps(kJobs["jobs"][0], "7", {}), "");
  EXPECT_EQ(*FormatScontrolShowSteps(kJobs["jobs"][2], "", {}), "");
  EXPECT_FALSE(FormatScontrolShowSteps(nlohmann::json::parse("[1]"), "", {}).ok());
}

}  // namespace
}  // namespace lockstep::cli
