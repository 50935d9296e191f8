#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "config/cluster_config.h"

namespace lockstep::sim {
namespace {

trace::TraceJob GpuJob(std::int64_t id, Time submit, int nodes, int gpus, Seconds run,
                      Seconds limit) {
  trace::TraceJob t;
  t.id = id;
  t.submit = submit;
  t.nodes = nodes;
  t.gpus_per_node = gpus;
  t.run_time = run;
  t.time_limit = limit;
  t.user = "u" + std::to_string(id % 3);
  return t;
}

SimOptions Policy(int depth) {
  SimOptions o;
  o.policy.reservation_depth = depth;
  o.policy.estimate_starts = false;
  o.policy_name = depth == 0 ? "fcfs" : "easy";
  return o;
}

const JobRecord& Record(const SimResult& r, JobId id) {
  for (const JobRecord& j : r.jobs)
    if (j.id == id) return j;
  ADD_FAILURE() << "no record for job " << id;
  static JobRecord none;
  return none;
}

// A 2-node cluster: job 1 holds a node for an hour, job 2 needs both nodes, job 3 is short.
trace::Trace BackfillTrace() {
  trace::Trace t;
  t.jobs = {GpuJob(1, 0, 1, 8, 3600, 3600), GpuJob(2, 10, 2, 8, 600, 600),
            GpuJob(3, 20, 1, 8, 300, 300)};
  return t;
}

TEST(Simulate, EasyBackfillsWhatFcfsHoldsBack) {
  config::ClusterConfig cluster = config::HomogeneousCluster(2, 16, 0, 8, "h100");
  Result<SimResult> fcfs = Simulate(BackfillTrace(), cluster, Policy(0));
  Result<SimResult> easy = Simulate(BackfillTrace(), cluster, Policy(1));
  ASSERT_TRUE(fcfs.ok() && easy.ok());
  EXPECT_EQ(Record(*fcfs, 3).start, 4200) << "FCFS: job 3 waits behind job 2";
  EXPECT_EQ(Record(*easy, 3).start, 20) << "EASY: job 3 ends before job 2 could start";
  EXPECT_EQ(Record(*easy, 2).start, 3600) << "and job 2 is not delayed";
  EXPECT_EQ(easy->capacity_units, 16);
  EXPECT_EQ(easy->unit_name, "gpus");
  EXPECT_LT(Summarize(*easy).mean_wait_s, Summarize(*fcfs).mean_wait_s);
}

TEST(Simulate, JobsOverTheirLimitAreKilledAtIt) {
  trace::Trace t;
  t.jobs = {GpuJob(1, 0, 1, 1, 5000, 1000)};
  Result<SimResult> r = Simulate(t, config::HomogeneousCluster(1, 8, 0, 8, ""), Policy(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Record(*r, 1).end, 1000);
  EXPECT_TRUE(Record(*r, 1).killed_at_limit);
}

TEST(Simulate, JobsTooBigForTheClusterAreCountedNotWaitedFor) {
  trace::Trace t;
  t.jobs = {GpuJob(1, 0, 4, 8, 100, 100), GpuJob(2, 0, 1, 8, 100, 100)};
  Result<SimResult> r = Simulate(t, config::HomogeneousCluster(2, 8, 0, 8, ""), Policy(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->never_started, 1);
}

TEST(Simulate, PreemptedJobsAreRequeuedAndRunAgain) {
  Result<config::ClusterConfig> c = config::ParseClusterConfig(R"(
nodes:
  - names: g[1-1]
    cpus: 8
    gpus: 8
partitions:
  - name: low
    nodes: ALL
    priority_tier: 1
    preempt_mode: requeue
  - name: high
    nodes: ALL
    priority_tier: 2
scheduler:
  preempt_type: partition_priority
)",
                                                           "test.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  trace::Trace t;
  t.jobs = {GpuJob(1, 0, 1, 8, 1000, 2000), GpuJob(2, 100, 1, 8, 50, 100)};
  t.jobs[0].partition = "low";
  t.jobs[1].partition = "high";
  std::ostringstream log;
  SimOptions o = Policy(1);
  o.policy = c->policy;
  o.event_log = &log;
  Result<SimResult> r = Simulate(t, *c, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(log.str().find("preempt job 1 for job 2 requeue"), std::string::npos) << log.str();
  EXPECT_EQ(Record(*r, 2).start, 100) << "the replay stops victims at once";
  EXPECT_EQ(Record(*r, 1).start, 150) << "the victim runs again from the start";
  EXPECT_EQ(Record(*r, 1).end, 1150);
}

TEST(Simulate, RejectsDuplicateJobIds) {
  trace::Trace t;
  t.jobs = {GpuJob(1, 0, 1, 1, 10, 10), GpuJob(1, 5, 1, 1, 10, 10)};
  Result<SimResult> r = Simulate(t, config::HomogeneousCluster(1, 8, 0, 8, ""), Policy(1));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job id 1 twice"), std::string::npos);
}

TEST(Simulate, RecordsComeInIdOrderWhateverTheIds) {
  // Sparse ids out of order: the replay finds each job's state by its id all the same.
  trace::Trace t;
  t.jobs = {GpuJob(9'000'000'000, 0, 1, 8, 3600, 3600), GpuJob(7, 10, 2, 8, 600, 600),
            GpuJob(400, 20, 1, 8, 300, 300)};
  Result<SimResult> r = Simulate(t, config::HomogeneousCluster(2, 8, 0, 8, ""), Policy(1));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->jobs[0].id, 7u);
  EXPECT_EQ(r->jobs[1].id, 400u);
  EXPECT_EQ(r->jobs[2].id, 9'000'000'000u);
  EXPECT_EQ(Record(*r, 400).start, 20) << "backfilled beside the first job";
  EXPECT_EQ(Record(*r, 7).start, 3600) << "waits for both nodes";
  EXPECT_EQ(Record(*r, 7).end, 4200);
  EXPECT_EQ(Record(*r, 9'000'000'000).user, "u0");
}

TEST(ClusterFromTrace, NeedsTheTraceToNameItsCluster) {
  trace::Trace t;
  EXPECT_FALSE(ClusterFromTrace(t).ok());
  t.nodes = {{"a", 2, 100, 0, ""}, {"b", 2, 100, 0, ""}};
  Result<config::ClusterConfig> c = ClusterFromTrace(t);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->base.nodes.size(), 2u);
  EXPECT_EQ(c->base.nodes[0].cpus, 2);
}

// The issue's quality bar on real traces: EASY beats FCFS on mean bounded slowdown and mean
// wait. KTH (28k jobs) runs in a few seconds under either policy.
TEST(Simulate, EasyBeatsFcfsOnTheKthTrace) {
  const char* env = std::getenv("LOCKSTEP_SHARED_DIR");
  std::string path = std::string(env ? env : "../shared") + "/data/swf/KTH-SP2-1996-2.1-cln.swf.gz";
  Result<trace::Trace> trace = trace::ReadSwf(path);
  if (!trace.ok()) GTEST_SKIP() << "shared trace data is absent (" << path << "): not checked";
  Result<config::ClusterConfig> cluster = ClusterFromTrace(*trace);
  ASSERT_TRUE(cluster.ok());
  Result<SimResult> fcfs = Simulate(*trace, *cluster, Policy(0));
  Result<SimResult> easy = Simulate(*trace, *cluster, Policy(1));
  ASSERT_TRUE(fcfs.ok() && easy.ok());
  Summary f = Summarize(*fcfs), e = Summarize(*easy);
  EXPECT_EQ(e.jobs + easy->never_started, static_cast<std::int64_t>(trace->jobs.size()));
  EXPECT_LT(e.mean_bsld, f.mean_bsld);
  EXPECT_LT(e.mean_wait_s, f.mean_wait_s);
  EXPECT_GT(e.utilization, 0.5);
}

}  // namespace
}  // namespace lockstep::sim
