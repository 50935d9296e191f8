// Reservations end to end, with the commands an operator and users type, against lockstepd and
// an agent running the jobs: scontrol create/update/delete/show reservation and sinfo -T in
// Slurm's layout, a maintenance window that a long job waits out (its reason saying so) while a
// short one runs before it, a user reservation that refuses another user, scontrol's refusals
// in Slurm's words, and all of it after lockstepd is killed and started again.
#include <gtest/gtest.h>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

constexpr int kNobody = 65534;

TEST(Reservations, AnOperatorsWindowsAsSlurmUsersKnowThem) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "show", "reservation"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "No reservations in the system\n");

  r = c.Run({"scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+1hour",
             "Duration=120", "Nodes=node1", "Flags=MAINT,IGNORE_JOBS", "Users=root"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Reservation created: maint\n");
  r = c.Run({"scontrol", "create", "res", "StartTime=now", "Duration=1-00:00:00", "Nodes=node2",
             "Users=root"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Reservation created: root_2\n");

  // A job longer than the hour before the window does not start on node1; a short one does.
  const unsigned long long long_job = Submit(c, {"-t", "120", "-w", "node1", "--wrap", "true"});
  const unsigned long long short_job = Submit(c, {"-t", "10", "-w", "node1", "--wrap", "true"});
  ASSERT_NE(long_job, 0u);
  ASSERT_NE(short_job, 0u);
  EXPECT_EQ(c.WaitJob(short_job).value("state", ""), "COMPLETED");
  EXPECT_TRUE(WaitFor(
      [&] {
        return c.Job(long_job).value("reason", "") == "ReqNodeNotAvail, Reserved for maintenance";
      },
      std::chrono::seconds(20)))
      << c.Job(long_job).dump();
  r = c.Run({"squeue", "-h", "-j", std::to_string(long_job), "-o", "%T|%r"});
  EXPECT_EQ(r.out, "PENDING|ReqNodeNotAvail, Reserved for maintenance\n");

  // The user reservation on node2 admits root only: nobody is refused in Slurm's words.
  r = c.Run({"sbatch", "--reservation=root_2", "--wrap", "true"}, "/tmp", kNobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Access denied to requested reservation"), std::string::npos) << r.err;
  r = c.Run({"sbatch", "--reservation=nosuch", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Requested reservation is invalid"), std::string::npos) << r.err;
  const unsigned long long in_resv = Submit(c, {"--reservation=root_2", "--wrap", "true"});
  ASSERT_NE(in_resv, 0u);
  nlohmann::json done = c.WaitJob(in_resv);
  EXPECT_EQ(done.value("state", ""), "COMPLETED");
  EXPECT_EQ(done.value("nodes", ""), "node2");
  r = c.Run({"squeue", "-h", "-t", "all", "-j", std::to_string(in_resv), "-o", "%v"});
  EXPECT_EQ(r.out, "root_2\n");

  // Ordinary users cannot make, change or delete one; bad words change nothing.
  r = c.Run({"scontrol", "create", "reservation", "StartTime=now", "Duration=10", "Nodes=node2",
             "Users=nobody", "Flags=OVERLAP"},
            "/tmp", kNobody);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Error creating the reservation: Access/permission denied\n");
  r = c.Run({"scontrol", "create", "reservation", "StartTime=now", "Duration=10", "Nodes=node2",
             "Users=root", "Foo=bar"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "scontrol: error: Unknown parameter Foo=bar.  No reservation created.\n");
  r = c.Run({"scontrol", "update", "ReservationName=nosuch", "Duration=20"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Error updating the reservation: Requested reservation is invalid\n"
            "slurm_update error: Requested reservation is invalid\n");
  r = c.Run({"scontrol", "update", "ReservationName=root_2", "Users+=nobody"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Reservation updated.\n");

  // What survives lockstepd's crash: both reservations, as scontrol and sinfo show them.
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(WaitFor([&] { return c.Run({"scontrol", "show", "res", "maint"}).exit_code == 0; },
                      std::chrono::seconds(20)));
  r = c.Run({"scontrol", "show", "res", "maint"});
  EXPECT_NE(r.out.find("ReservationName=maint StartTime="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   Nodes=node1 NodeCnt=1 CoreCnt=16 Features=(null) PartitionName=(null) "
                       "Flags=MAINT,IGNORE_JOBS,SPEC_NODES\n   TRES=cpu=16\n   Users=root "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("State=INACTIVE"), std::string::npos);
  r = c.Run({"scontrol", "show", "res", "-o", "root_2"});
  EXPECT_NE(r.out.find("Users=root,nobody"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  r = c.Run({"sinfo", "-T"});
  EXPECT_EQ(r.out.rfind("RESV_NAME     STATE           START_TIME             END_TIME     "
                        "DURATION  NODELIST\nmaint      INACTIVE  ",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("root_2       ACTIVE  "), std::string::npos) << r.out;
  EXPECT_EQ(c.Job(long_job).value("state", ""), "PENDING");

  r = c.Run({"scontrol", "delete", "ReservationName=nosuch"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "delete_reservation ReservationName=nosuch: Requested reservation is invalid\n");
  r = c.Run({"scontrol", "delete", "ReservationName=maint"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without the window the long job runs.
  EXPECT_EQ(c.WaitJob(long_job).value("state", ""), "COMPLETED");
}

}  // namespace
}  // namespace lockstep::testing
