// Golden scenarios (after Fluxion's t/ and DuckDB's .test files): each folder of tests/golden
// holds a cluster (cluster.yaml, its `scheduler:` section is the policy), a workload (jobs.csv,
// whose first comment lines say what the scenario shows) and the placement log the simulator
// must print (expected.log), reviewed as text. LOCKSTEP_UPDATE_GOLDEN=1 rewrites the logs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/simulator.h"
#include "config/cluster_config.h"
#include "trace/trace.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string RunScenario(const fs::path& dir) {
  Result<config::ClusterConfig> cluster = config::LoadClusterConfig((dir / "cluster.yaml").string());
  EXPECT_TRUE(cluster.ok()) << cluster.status().ToString();
  Result<trace::Trace> trace = trace::ReadLockstepCsv((dir / "jobs.csv").string());
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  if (!cluster.ok() || !trace.ok()) return "";
  std::ostringstream log;
  sim::SimOptions o;
  o.policy = cluster->policy;
  o.policy.estimate_starts = false;
  o.event_log = &log;
  Result<sim::SimResult> r = sim::Simulate(*trace, *cluster, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return log.str();
}

TEST(Golden, EveryScenarioPrintsItsExpectedLog) {
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(LOCKSTEP_GOLDEN_DIR)) {
    // help/: the CLI's --help texts, compared by slurm_options_test.
    if (!entry.is_directory() || entry.path().filename() == "help") continue;
    ++scenarios;
    SCOPED_TRACE(entry.path().filename().string());
    std::string got = RunScenario(entry.path());
    fs::path expected = entry.path() / "expected.log";
    if (std::getenv("LOCKSTEP_UPDATE_GOLDEN")) {
      std::ofstream(expected) << got;
      continue;
    }
    ASSERT_TRUE(fs::exists(expected))
        << "missing " << expected << " (LOCKSTEP_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(got, ReadAll(expected));
  }
  EXPECT_GE(scenarios, 4);
}

}  // namespace
}  // namespace lockstep
