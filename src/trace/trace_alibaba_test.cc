#include <gtest/gtest.h>

#include <string>

#include "trace/trace.h"
#include "trace/trace_test_util.h"

namespace lockstep::trace {
namespace {

using testing::ScratchDir;
using testing::SharedTrace;

constexpr std::string_view kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

Trace ParseOk(std::string_view text) {
  Result<Trace> r = ParseAlibabaPods(text, "pods.csv");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : Trace{};
}

std::string ParseError(std::string_view text) {
  Result<Trace> r = ParseAlibabaPods(text, "pods.csv");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(AlibabaPodsTest, MapsFields) {
  Trace t = ParseOk(std::string(kHeader) +
                    "p0,12000,16384,1,1000,,LS,Running,100,1100,160\n"
                    "p1,6500,12288,2,1000,V100M16,BE,Succeeded,200,500,200\n");
  ASSERT_EQ(t.jobs.size(), 2u);
  const TraceJob& a = t.jobs[0];
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(a.submit, 100);
  EXPECT_EQ(a.run_time, 1100 - 160);
  EXPECT_EQ(a.recorded_wait, 60);
  EXPECT_EQ(a.procs, 12);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.gpus_per_node, 1);
  EXPECT_EQ(a.gpu_type, "");
  EXPECT_EQ(a.mem_mb_per_node, 16384);
  EXPECT_EQ(a.user, "LS");
  EXPECT_EQ(a.account, "LS");
  EXPECT_EQ(a.time_limit, -1);
  const TraceJob& b = t.jobs[1];
  EXPECT_EQ(b.id, 2);
  EXPECT_EQ(b.procs, 7);  // 6500 milli-CPUs round up
  EXPECT_EQ(b.gpus_per_node, 2);
  EXPECT_EQ(b.gpu_type, "V100M16");
  EXPECT_EQ(b.recorded_wait, 0);
  EXPECT_EQ(t.skipped, 0);
}

TEST(AlibabaPodsTest, SharedGpuTakesWholeGpuAndSmallCpuOne) {
  Trace t = ParseOk(std::string(kHeader) + "p,100,512,1,250,,BE,Failed,0,10,0\n");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpus_per_node, 1);
  EXPECT_EQ(t.jobs[0].procs, 1);
  Trace zero = ParseOk(std::string(kHeader) + "p,0,0,0,0,,BE,Running,0,10,0\n");
  EXPECT_EQ(zero.jobs[0].procs, 1);  // at least one CPU
}

TEST(AlibabaPodsTest, SeveralGpuModelsMeanAny) {
  Trace t = ParseOk(std::string(kHeader) + "p,1000,1,1,1000,V100M16|V100M32,LS,Running,0,10,0\n");
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_EQ(t.jobs[0].gpu_type, "");
}

TEST(AlibabaPodsTest, EmptyQosGivesDefaultUser) {
  Trace t = ParseOk(std::string(kHeader) + "p,1000,1,0,0,,,Running,0,10,0\n");
  EXPECT_EQ(t.jobs[0].user, "alibaba");
  EXPECT_EQ(t.jobs[0].account, "");
}

TEST(AlibabaPodsTest, SkipsPodsWithoutValidTimes) {
  Trace t = ParseOk(std::string(kHeader) +
                    "p1,1000,1,1,1000,,BE,Pending,10,20,\n"    // never scheduled
                    "p2,1000,1,1,1000,,BE,Running,10,,12\n"    // never deleted
                    "p3,1000,1,1,1000,,BE,Running,10,11,12\n"  // deleted before start
                    "p4,1000,1,1,1000,,BE,Pending,30,40,35\n"  // pending but ran: kept
                    "p5,1000,1,1,1000,,BE,Running,5,9,9\n");   // zero run time: kept
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.skipped, 3);
  EXPECT_EQ(t.jobs[0].id, 5);  // sorted by creation time
  EXPECT_EQ(t.jobs[0].run_time, 0);
  EXPECT_EQ(t.jobs[1].id, 4);
  EXPECT_EQ(t.jobs[1].run_time, 5);
}

TEST(AlibabaPodsTest, ErrorsNameFileLineAndColumn) {
  const std::string h(kHeader);
  EXPECT_EQ(ParseError(h + "p,1000,1,1,1000,,LS,Running,0,10,0\np,x,1,1,1000,,LS,Running,0,10,0\n"),
            "pods.csv:3: column 'cpu_milli': 'x' is not an integer");
  EXPECT_EQ(ParseError(h + "p,1000,1,-1,1000,,LS,Running,0,10,0\n"),
            "pods.csv:2: column 'num_gpu': -1 is out of range (0..2147483647)");
  EXPECT_EQ(ParseError(h + "p,1000,1,1,1000,,LS,Running,0,1.5,0\n"),
            "pods.csv:2: column 'deletion_time': '1.5' is not an integer");
  EXPECT_EQ(ParseError(h + "p,1000,1,1\n"), "pods.csv:2: expected 11 fields, found 4");
  EXPECT_EQ(ParseError(h + "p,,1,1,1000,,LS,Running,0,10,0\n"),
            "pods.csv:2: column 'cpu_milli': empty, expected an integer");
  EXPECT_EQ(ParseError(""), "pods.csv: no header line (the file is empty)");
  EXPECT_EQ(ParseError("name,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,"
                       "scheduled_time\n"),
            "pods.csv:1: the header has no column 'cpu_milli'");
}

TEST(AlibabaPodsTest, PodListWithoutTimesCannotBeReplayed) {
  std::string m = ParseError("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1,1,1000\n");
  EXPECT_NE(m.find("pods.csv"), std::string::npos) << m;
  EXPECT_NE(m.find("no creation_time, deletion_time"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot be replayed"), std::string::npos) << m;
}

TEST(AlibabaNodesTest, MapsFieldsAndErrors) {
  Result<std::vector<TraceNode>> n = ParseAlibabaNodes(
      "sn,cpu_milli,memory_mib,gpu,model\nnode-0,64000,262144,2,P100\nnode-1,96500,1,8,\n",
      "nodes.csv");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(n->size(), 2u);
  EXPECT_EQ((*n)[0].name, "node-0");
  EXPECT_EQ((*n)[0].cpus, 64);
  EXPECT_EQ((*n)[0].mem_mb, 262144);
  EXPECT_EQ((*n)[0].gpus, 2);
  EXPECT_EQ((*n)[0].gpu_type, "P100");
  EXPECT_EQ((*n)[1].cpus, 96);
  EXPECT_EQ((*n)[1].gpu_type, "");

  Result<std::vector<TraceNode>> bad = ParseAlibabaNodes(
      "sn,cpu_milli,memory_mib,gpu,model\nnode-0,64000,262144,two,P100\n", "nodes.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "nodes.csv:2: column 'gpu': 'two' is not an integer");
  Result<std::vector<TraceNode>> no_name =
      ParseAlibabaNodes("sn,cpu_milli,memory_mib,gpu,model\n,64000,262144,2,P100\n", "nodes.csv");
  EXPECT_EQ(no_name.status().message(), "nodes.csv:2: column 'sn': empty node name");
  Result<std::vector<TraceNode>> no_col = ParseAlibabaNodes("sn,cpu_milli\n", "nodes.csv");
  EXPECT_EQ(no_col.status().message(), "nodes.csv:1: the header has no column 'memory_mib'");
}

TEST(AlibabaReadTest, ReadsBothFilesGzipOrNot) {
  ScratchDir dir;
  const std::string pods =
      dir.WriteGzip("pods.csv.gz", std::string(kHeader) + "p,1000,1,1,1000,,LS,Running,0,10,0\n");
  const std::string nodes =
      dir.WritePlain("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,100,1,T4\n");
  Result<Trace> t = ReadAlibaba(pods, nodes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs.size(), 1u);
  ASSERT_EQ(t->nodes.size(), 1u);
  EXPECT_EQ(t->nodes[0].gpu_type, "T4");
  Result<Trace> no_nodes = ReadAlibaba(pods, "");
  ASSERT_TRUE(no_nodes.ok());
  EXPECT_TRUE(no_nodes->nodes.empty());
  Result<Trace> missing = ReadAlibaba(pods, dir.File("none.csv"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir.File("none.csv")), std::string::npos);
}

TEST(AlibabaRealTraceTest, DefaultPodListAndNodes) {
  const std::string pods = SharedTrace("alibaba-2023/openb_pod_list_default.csv");
  const std::string nodes = SharedTrace("alibaba-2023/openb_node_list_gpu_node.csv");
  LOCKSTEP_SKIP_IF_ABSENT(pods, "alibaba-2023/openb_pod_list_default.csv");
  LOCKSTEP_SKIP_IF_ABSENT(nodes, "alibaba-2023/openb_node_list_gpu_node.csv");
  Result<Trace> t = ReadAlibaba(pods, nodes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // 8,152 pods (data/README.md). Sanity check, counted with awk on the file: the 897 Pending
  // pods have no scheduled_time and are skipped; every other pod has valid times.
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, 8152);
  EXPECT_EQ(t->skipped, 897);
  ASSERT_EQ(t->nodes.size(), 1213u);  // 1,213 GPU nodes with 6,212 GPUs
  std::int64_t gpus = 0;
  for (const TraceNode& n : t->nodes) gpus += n.gpus;
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ(t->nodes[0].name, "openb-node-0000");
  EXPECT_EQ(t->nodes[0].cpus, 64);
  EXPECT_EQ(t->nodes[0].gpu_type, "P100");
  EXPECT_EQ(t->jobs[0].id, 1);  // openb-pod-0000, created at 0
  EXPECT_EQ(t->jobs[0].procs, 12);
  EXPECT_EQ(t->jobs[0].run_time, 12537496);
}

TEST(AlibabaRealTraceTest, MultiGpu50HasNoTimes) {
  const std::string pods = SharedTrace("alibaba-2023/openb_pod_list_multigpu50.csv");
  LOCKSTEP_SKIP_IF_ABSENT(pods, "alibaba-2023/openb_pod_list_multigpu50.csv");
  Result<Trace> t = ReadAlibaba(pods, "");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(pods), std::string::npos);
  EXPECT_NE(t.status().message().find("cannot be replayed"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::trace
