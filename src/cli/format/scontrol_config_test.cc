// scontrol show config against the keys a real Slurm 22.05.8 printed
// (tests/data/slurm_config/show_config_keys.txt): every one, in its order, padded as Slurm pads.
#include "cli/format/scontrol_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace lockstep::cli {
namespace {

std::vector<std::string> ReferenceKeys() {
  const char* src = std::getenv("LOCKSTEP_SOURCE_DIR");
  std::ifstream in(std::string(src ? src : ".") + "/tests/data/slurm_config/show_config_keys.txt");
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') keys.push_back(line);
  return keys;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The keys of the "Key = Value" block, in the order printed (up to the first blank line).
std::vector<std::string> PrintedKeys(const std::string& text) {
  std::vector<std::string> keys;
  const std::vector<std::string> lines = Lines(text);
  for (std::size_t i = 1; i < lines.size() && !lines[i].empty(); ++i)
    keys.push_back(lines[i].substr(0, lines[i].find(' ')));
  return keys;
}

class ScontrolShowConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  // lockstepd's answer, as controller_config_view.cc makes it (a few of its keys).
  const nlohmann::json config_ = {
      {"ClusterName", "lockstep"},         {"KillWait", "5 sec"},
      {"SchedulerType", "sched/backfill"}, {"BOOT_TIME", 1764690000},
      {"SlurmctldHost[0]", "ctl1"},        {"LockstepPlacement", "best_fit"},
      {"LockstepBackend", "agent"}};
};

TEST_F(ScontrolShowConfig, EveryKeyOfSlurm2205InItsOrderThenLockstepsOwn) {
  const std::vector<std::string> reference = ReferenceKeys();
  ASSERT_EQ(reference.size(), 207u) << "tests/data/slurm_config/show_config_keys.txt unread?";
  std::vector<std::string> expected = reference;
  expected.push_back("LockstepBackend");  // lockstep's own, sorted, after Slurm's
  expected.push_back("LockstepPlacement");
  EXPECT_EQ(PrintedKeys(FormatScontrolShowConfig(config_, 1764696000)), expected);
}

TEST_F(ScontrolShowConfig, TheTableIsTheReferenceList) {
  std::vector<std::string> table;
  for (const SlurmConfigKey& key : SlurmConfigKeys()) table.push_back(key.name);
  EXPECT_EQ(table, ReferenceKeys());
}

TEST_F(ScontrolShowConfig, DatedLockstepdsValuesSlurmsDefaultsAndTheControllerUp) {
  const std::vector<std::string> lines = Lines(FormatScontrolShowConfig(config_, 1764696000));
  ASSERT_GT(lines.size(), 3u);
  EXPECT_EQ(lines.front(), "Configuration data as of 2025-12-02T17:20:00");
  EXPECT_EQ(lines[1], "AccountingStorageBackupHost = (null)");  // a long key: one space
  EXPECT_EQ(lines[lines.size() - 2], "");
  EXPECT_EQ(lines.back(), "Slurmctld(primary) at ctl1 is UP");
  const std::string text = FormatScontrolShowConfig(config_, 1764696000);
  for (const char* line : {
           "KillWait                = 5 sec\n",                // lockstepd's
           "BOOT_TIME               = 2025-12-02T15:40:00\n",  // its seconds as a time stamp
           "SchedulerTimeSlice      = 30 sec\n",               // Slurm's defaults
           "AcctGatherNodeFreq      = 0 sec\n",
           "PowerPlugin             = \n",  // empty, as Slurm prints it
           "SlurmctldHost[0]        = ctl1\n",
       })
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

}  // namespace
}  // namespace lockstep::cli
