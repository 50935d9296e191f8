// Reservations in the simulator: the same book and windows as lockstepd's. A two-hour
// maintenance window an hour into the replay, on two of four nodes: no job runs there during
// it, jobs that fit the hour before it start on those nodes, and a bad reservation is refused
// before anything is replayed.
#include <gtest/gtest.h>

#include "config/cluster_config.h"
#include "sim/simulator.h"

namespace lockstep::sim {
namespace {

constexpr Time kWindowStart = 3600, kWindowEnd = 3 * 3600;

// Every 10 minutes for 4 hours, a one-node job of all 8 CPUs; limits alternate 30 and 90 min.
trace::Trace Steady() {
  trace::Trace t;
  for (JobId id = 1; id <= 24; ++id) {
    trace::TraceJob j;
    j.id = id;
    j.submit = static_cast<Time>((id - 1) * 600);
    j.nodes = 1;
    j.procs = 8;
    j.time_limit = id % 2 ? 1800 : 5400;
    j.run_time = j.time_limit;
    j.user = "u";
    t.jobs.push_back(j);
  }
  return t;
}

SimOptions WithMaintenance() {
  SimOptions o;
  o.policy.reservation_depth = 1;
  o.policy_name = "easy";
  o.reservations = {{"ReservationName=maint", "StartTime=now+1hour", "Duration=120",
                     "Nodes=node[1-2]", "Flags=MAINT,IGNORE_JOBS", "Users=root"}};
  return o;
}

TEST(SimReservation, NoJobRunsInTheWindowAndTheHourBeforeItIsUsed) {
  Result<SimResult> r = Simulate(Steady(), config::HomogeneousCluster(4, 8, 0, 0, ""), WithMaintenance());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->jobs.size(), 24u);
  int peak_before = 0;  // the window's nodes take jobs that end before it
  // Records hold no node names: at every moment of the window (its start, and each start in
  // it) at most the two other nodes' jobs run.
  auto running_at = [&](Time t) {
    int n = 0;
    for (const JobRecord& k : r->jobs) n += k.start <= t && k.end > t;
    return n;
  };
  EXPECT_LE(running_at(kWindowStart), 2);
  for (const JobRecord& j : r->jobs) {
    if (j.start < kWindowStart) peak_before = std::max(peak_before, running_at(j.start));
    if (j.start >= kWindowStart && j.start < kWindowEnd)
      EXPECT_LE(running_at(j.start), 2) << "job " << j.id << " started in the window";
  }
  EXPECT_GT(peak_before, 2);
}

TEST(SimReservation, WithoutTheWindowAllFourNodesAreUsed) {
  SimOptions o = WithMaintenance();
  o.reservations.clear();
  Result<SimResult> r = Simulate(Steady(), config::HomogeneousCluster(4, 8, 0, 0, ""), o);
  ASSERT_TRUE(r.ok());
  int peak = 0;
  for (const JobRecord& j : r->jobs) {
    int at_once = 0;
    for (const JobRecord& k : r->jobs)
      if (k.start <= j.start && k.end > j.start) ++at_once;
    peak = std::max(peak, at_once);
  }
  EXPECT_GT(peak, 2);  // the check above can fail: without a window more than two run at once
}

TEST(SimReservation, ABadReservationIsRefusedWithItsNumber) {
  SimOptions o = WithMaintenance();
  o.reservations.push_back({"StartTime=now", "Duration=10", "Nodes=node9", "Users=root"});
  Result<SimResult> r = Simulate(Steady(), config::HomogeneousCluster(4, 8, 0, 0, ""), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "reservation 2: Invalid node name specified");
}

}  // namespace
}  // namespace lockstep::sim
