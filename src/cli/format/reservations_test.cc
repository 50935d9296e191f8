// scontrol show reservation and sinfo -T as Slurm 22.05 prints them (taken from the peer).
#include "cli/format/reservations.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace lockstep::cli {
namespace {

class ReservationFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  // 2026-12-07T15:35:41Z, two hours.
  nlohmann::json Maint() {
    return {{"name", "maint"},          {"start_time", 1796657741},
            {"end_time", 1796664941},   {"duration", 7200},
            {"nodes", "node[001-002]"}, {"node_count", 2},
            {"cpu_count", 128},         {"partition", ""},
            {"flags", "MAINT,IGNORE_JOBS,SPEC_NODES"},
            {"users", {"root"}},        {"accounts", nlohmann::json::array()},
            {"state", "INACTIVE"}};
  }
};

TEST_F(ReservationFormatTest, ShowReservationIsSlurmsRecord) {
  EXPECT_EQ(FormatScontrolShowReservations(nlohmann::json::array({Maint()}), ""),
            "ReservationName=maint StartTime=2026-12-07T15:35:41 EndTime=2026-12-07T17:35:41 "
            "Duration=02:00:00\n"
            "   Nodes=node[001-002] NodeCnt=2 CoreCnt=128 Features=(null) PartitionName=(null) "
            "Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n"
            "   TRES=cpu=128\n"
            "   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
            "BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n\n");
}

TEST_F(ReservationFormatTest, NoneAndUnknownInSlurmsWords) {
  EXPECT_EQ(FormatScontrolShowReservations(nlohmann::json::array(), ""),
            "No reservations in the system\n");
  EXPECT_EQ(FormatScontrolShowReservations(nlohmann::json::array({Maint()}), "nosuch"),
            "Reservation nosuch not found\n");
  EXPECT_EQ(FormatSinfoReservations(nlohmann::json::array()), "No reservations in the system\n");
}

TEST_F(ReservationFormatTest, SinfoTIsSlurmsTable) {
  nlohmann::json team = Maint();
  team["name"] = "team";
  team["state"] = "ACTIVE";
  team["duration"] = 86400;
  team["end_time"] = 1796657741 + 86400;
  team["nodes"] = "node[003-004]";
  team["name"] = "a_very_long_name";
  EXPECT_EQ(FormatSinfoReservations(nlohmann::json::array({Maint(), team})),
            "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n"
            "maint      INACTIVE  2026-12-07T15:35:41  2026-12-07T17:35:41     02:00:00  node[001-002]\n"
            "a_very_lon   ACTIVE  2026-12-07T15:35:41  2026-12-08T15:35:41   1-00:00:00  node[003-004]\n");
}

TEST_F(ReservationFormatTest, InfiniteHasNoEnd) {
  nlohmann::json r = Maint();
  r["end_time"] = nullptr;
  r["duration"] = nullptr;
  EXPECT_NE(FormatScontrolShowReservations(nlohmann::json::array({r}), "")
                .find("EndTime=Unknown Duration=UNLIMITED"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep::cli
