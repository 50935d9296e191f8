#include "cli/format/scontrol_config.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

TEST(ScontrolShowConfig, DatedKeysInOrderPaddedAsSlurm) {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  const nlohmann::json config = {{"SchedulerType", "sched/backfill"},
                                 {"AccountingStorageBackupHost", "(null)"},
                                 {"KillWait", "30 sec"}};
  EXPECT_EQ(FormatScontrolShowConfig(config, 1764696000),
            "Configuration data as of 2025-12-02T17:20:00\n"
            "AccountingStorageBackupHost = (null)\n"
            "KillWait                = 30 sec\n"
            "SchedulerType           = sched/backfill\n");
}

}  // namespace
}  // namespace lockstep::cli
