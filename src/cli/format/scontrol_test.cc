#include "cli/format/scontrol.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/format/format_test_data.h"

namespace lockstep::cli {
namespace {

// Golden outputs keep one report line a source line.
// clang-format off

using testdata::kNow;

ScontrolOptions Options() {
  ScontrolOptions options;
  options.now = kNow;
  return options;
}

TEST(ScontrolShowJob, PendingJobGolden) {
  Result<std::string> out = FormatScontrolShowJob(testdata::Jobs()[1], Options());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "JobId=1235 JobName=train\n"
            "   UserId=alice(1000) GroupId=1000(1000) MCS_label=N/A\n"
            "   Priority=4000 Nice=0 Account=llm QOS=normal\n"
            "   JobState=PENDING Reason=Resources Dependency=afterok:1234\n"
            "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
            "   RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A\n"
            "   SubmitTime=2025-11-29T08:05:40 EligibleTime=2025-11-29T08:05:40\n"
            "   StartTime=2025-11-29T08:36:40 EndTime=2025-11-29T09:36:40 Deadline=N/A\n"
            "   SuspendTime=None SecsPreSuspend=0\n"
            "   Partition=gpu AllocNode:Sid=(null):0\n"
            "   ReqNodeList=(null) ExcNodeList=(null)\n"
            "   NodeList=(null)\n"
            "   NumNodes=64 NumCPUs=4096 NumTasks=512 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
            "   ReqTRES=cpu=4096,node=64,billing=4096,gres/gpu=512\n"
            "   AllocTRES=(null)\n"
            "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
            "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
            "   Features=(null) DelayBoot=00:00:00\n"
            "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
            "   Command=(null)\n"
            "   WorkDir=/home/alice\n"
            "   StdIn=/dev/null\n"
            "   TresPerNode=gres:gpu:8\n"  // 22.05's spelling
            "\n");
}

TEST(ScontrolShowJob, ArrayTaskAndRunTime) {
  Result<std::string> out = FormatScontrolShowJob(testdata::Jobs(), Options());
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("JobId=40 ArrayJobId=40 ArrayTaskId=3-10%2 JobName=preprocess-data\n"),
            std::string::npos);
  EXPECT_NE(out->find("JobId=42 ArrayJobId=40 ArrayTaskId=2 JobName=preprocess-data\n"),
            std::string::npos);
  EXPECT_NE(out->find("   RunTime=1-01:01:01 TimeLimit=UNLIMITED TimeMin=N/A\n"),
            std::string::npos);
  EXPECT_NE(out->find("   StartTime=2025-11-28T07:05:39 EndTime=Unknown Deadline=N/A\n"),
            std::string::npos);
  EXPECT_NE(out->find("   NodeList=gpu-node[001-064]\n   BatchHost=gpu-node001\n"),
            std::string::npos);
  // Four records, each followed by a blank line; BatchHost and TresPerNode only when known.
  EXPECT_EQ(std::count(out->begin(), out->end(), '\n'), 23 + 24 + 25 + 24);
}

TEST(ScontrolShowJob, OneLinerAndEmpty) {
  ScontrolOptions options = Options();
  options.one_liner = true;
  Result<std::string> out = FormatScontrolShowJob(testdata::Jobs(), options);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(std::count(out->begin(), out->end(), '\n'), 4);
  EXPECT_EQ(out->rfind("JobId=1234 JobName=train UserId=alice(1000) ", 0), 0u);
  EXPECT_EQ(*FormatScontrolShowJob(nlohmann::json::array(), Options()), "No jobs in the system\n");
}

TEST(ScontrolShowJob, SwitchesLineAfterStdOut) {
  nlohmann::json job = testdata::Jobs()[1];
  job["stdout"] = "/home/alice/slurm-1235.out";
  job["max_switches"] = 1;
  job["switches_wait"] = 300;
  Result<std::string> out = FormatScontrolShowJob(job, Options());
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("   StdOut=/home/alice/slurm-1235.out\n   Switches=1@00:05:00\n"),
            std::string::npos)
      << *out;
}

TEST(ScontrolShowNode, SaysWhichLimitsTheNodeEnforces) {
  nlohmann::json node = testdata::Nodes()[6];
  node["limits_enforced"] = "cpus";
  Result<std::string> out = FormatScontrolShowNode(node, Options());
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("   AllocTRES=\n   LimitsEnforced=cpus\n   Reason="), std::string::npos)
      << *out;
}

TEST(ScontrolShowNode, DrainedNodeGolden) {
  Result<std::string> out = FormatScontrolShowNode(testdata::Nodes()[6], Options());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "NodeName=adev6 CoresPerSocket=1\n"
            "   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=N/A\n"
            "   AvailableFeatures=(null)\n"
            "   ActiveFeatures=(null)\n"
            "   Gres=(null)\n"
            "   NodeAddr=adev6 NodeHostName=adev6\n"
            "   RealMemory=3448 AllocMem=0 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=16 Owner=N/A MCS_label=N/A\n"
            "   Partitions=debug\n"
            "   CfgTRES=cpu=2,mem=3448M,billing=2\n"
            "   AllocTRES=\n"
            "   Reason=Memory errors [root@2025-11-29T04:20:00]\n"
            "\n");
}

TEST(ScontrolShowNode, States) {
  nlohmann::json nodes = nlohmann::json::array({testdata::Node("a", "mixed", "p", 1),
                                                testdata::Node("b", "down*", "p"),
                                                testdata::Node("c", "draining", "p", 2)});
  Result<std::string> out = FormatScontrolShowNode({{"nodes", nodes}}, Options());
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("State=MIXED "), std::string::npos);
  EXPECT_NE(out->find("State=DOWN+NOT_RESPONDING "), std::string::npos);
  EXPECT_NE(out->find("State=ALLOCATED+DRAIN "), std::string::npos);
  EXPECT_NE(out->find("AllocTRES=cpu=1\n"), std::string::npos);
}

TEST(ScontrolShowPartition, DefaultPartitionGolden) {
  Result<std::string> out =
      FormatScontrolShowPartition(testdata::Partitions()[1], testdata::Nodes(), Options());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "PartitionName=debug\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=YES QoS=N/A\n"
            "   DefaultTime=00:10:00 DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=8 MaxTime=00:30:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=adev[0-7]\n"
            "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=OFF\n"
            "   State=UP TotalCPUs=16 TotalNodes=8 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "\n");
}

// The API spells "no node limit" as INT32_MAX: Slurm prints UNLIMITED, as for null.
TEST(ScontrolShowPartition, Int32MaxNodesIsUnlimited) {
  nlohmann::json parts = testdata::Partitions();
  parts[0]["max_nodes"] = 2147483647;
  Result<std::string> out = FormatScontrolShowPartition(parts, nullptr, Options());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->find("MaxNodes=2147483647"), std::string::npos) << *out;
}

TEST(ScontrolShowPartition, UnlimitedAndOneLiner) {
  ScontrolOptions options = Options();
  options.one_liner = true;
  Result<std::string> out = FormatScontrolShowPartition(testdata::Partitions(), nullptr, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(std::count(out->begin(), out->end(), '\n'), 3);
  EXPECT_NE(out->find("PartitionName=batch AllowGroups=ALL"), std::string::npos);
  EXPECT_NE(out->find("DefaultTime=NONE "), std::string::npos);  // none set: Slurm's NONE
  EXPECT_NE(out->find("MaxNodes=UNLIMITED MaxTime=UNLIMITED "), std::string::npos);
  EXPECT_NE(out->find("Nodes=(null) "), std::string::npos);
  EXPECT_NE(out->find("State=DOWN TotalCPUs=0 TotalNodes=0 "), std::string::npos);
}

TEST(ScontrolShowHostnames, ExpandsOneAPerLine) {
  EXPECT_EQ(*FormatScontrolShowHostnames("gpu[001-003],login1"),
            "gpu001\ngpu002\ngpu003\nlogin1\n");
  EXPECT_EQ(*FormatScontrolShowHostnames(""), "");
  EXPECT_EQ(FormatScontrolShowHostnames("gpu[3-1]").status().code(), StatusCode::kInvalidArgument);
}

TEST(Scontrol, MalformedInput) {
  EXPECT_FALSE(FormatScontrolShowJob(nlohmann::json{{"jobs", 3}}, Options()).ok());
  EXPECT_FALSE(FormatScontrolShowNode(nlohmann::json::array({1}), Options()).ok());
  EXPECT_FALSE(FormatScontrolShowPartition("x", nullptr, Options()).ok());
}

// clang-format on

}  // namespace
}  // namespace lockstep::cli
