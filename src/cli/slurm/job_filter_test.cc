#include "cli/slurm/job_filter.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

nlohmann::json Job(int id, int array = 0, int task = -1, const char* state = "PENDING") {
  nlohmann::json j = {{"job_id", id}, {"state", state}, {"name", "n" + std::to_string(id)},
                      {"user", "alice"}, {"nodes", ""}, {"partition", "gpu"}};
  if (array) {
    j["array_job_id"] = array;
    j["array_task_id"] = task;
  }
  return j;
}

TEST(JobIdList, ParsesSlurmJobIds) {
  struct Case {
    std::string text;
    bool ok;
    std::vector<std::pair<nlohmann::json, bool>> matches;
  };
  const Case cases[] = {
      {"42", true, {{Job(42), true}, {Job(43), false}, {Job(44, 42, 2), true}}},
      {"40_2", true, {{Job(42, 40, 2), true}, {Job(43, 40, 3), false}, {Job(40), false}}},
      {"40_[1-2]", true, {{Job(41, 40, 1), true}, {Job(42, 40, 2), true}, {Job(43, 40, 3), false}}},
      {"40_[1,3]", true, {{Job(41, 40, 1), true}, {Job(42, 40, 2), false}, {Job(43, 40, 3), true}}},
      {"7,40_[1-3%2]", true, {{Job(7), true}, {Job(43, 40, 3), true}}},
      {"x", false, {}},
      {"40_1-2", false, {}},
      {"40_[a]", false, {}},
      {"0", false, {}},
  };
  for (const Case& c : cases) {
    Result<std::vector<JobIdPattern>> ids = ParseJobIdList(c.text);
    ASSERT_EQ(ids.ok(), c.ok) << c.text;
    if (!c.ok) {
      EXPECT_EQ(ids.status().message().rfind("Invalid job id specified: ", 0), 0u) << c.text;
      continue;
    }
    for (const auto& [job, want] : c.matches) {
      JobFilter f;
      f.ids = *ids;
      EXPECT_EQ(Passes(job, f), want) << c.text << " " << job.dump();
    }
  }
}

TEST(JobFilter, NamesNodesUsersStates) {
  nlohmann::json a = Job(1), b = Job(2, 0, -1, "RUNNING");
  b["nodes"] = "node[2-3]";
  b["user"] = "bob";
  JobFilter names;
  names.names = CommaSet("n1,zz");
  EXPECT_TRUE(Passes(a, names));
  EXPECT_FALSE(Passes(b, names));
  JobFilter nodes;
  ASSERT_TRUE(AddNodes(nodes, "node3").ok());
  EXPECT_FALSE(Passes(a, nodes));
  EXPECT_TRUE(Passes(b, nodes));
  EXPECT_FALSE(AddNodes(nodes, "node[").ok());
  JobFilter users;
  users.users = {"bob"};
  EXPECT_TRUE(Passes(b, users));
  EXPECT_FALSE(Passes(a, users));
  JobFilter states;
  states.states = {JobStateName("r")};
  EXPECT_TRUE(Passes(b, states));
  EXPECT_FALSE(Passes(a, states));
  EXPECT_EQ(JobStateName("pd"), "PENDING");
  EXPECT_EQ(JobStateName("nosuch"), "");
}

// Regression: sprio aborted on every pending job, its object's "qos" being the QoS factor.
TEST(JobFilter, FieldsThatAreNotTextMatchNoNameAndThrowNothing) {
  const nlohmann::json priority = {{"job_id", 7}, {"user", "bob"}, {"qos", 1000.0}};
  EXPECT_TRUE(Passes(priority, JobFilter{}));
  JobFilter qos;
  qos.qos = {"normal"};
  EXPECT_FALSE(Passes(priority, qos));
  JobFilter users;
  users.users = {"bob"};
  EXPECT_TRUE(Passes(priority, users));
}

TEST(CollapsePendingArrays, OneLinePerArrayPendingRemainder) {
  nlohmann::json jobs = nlohmann::json::array();
  jobs.push_back(Job(10, 10, 1, "RUNNING"));
  for (int t = 3; t <= 8; ++t) {
    nlohmann::json j = Job(10 + t, 10, t);
    j["array_max_running"] = 2;
    jobs.push_back(j);
  }
  jobs.push_back(Job(30));
  jobs.push_back(Job(41, 40, 5));  // one pending task: printed as 40_5
  nlohmann::json out = CollapsePendingArrays(jobs);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["array_task_id"], 1);
  EXPECT_EQ(out[1]["array_task_str"], "[3-8%2]");
  EXPECT_EQ(out[1]["job_id"], 10);
  EXPECT_FALSE(out[1].contains("array_task_id"));
  EXPECT_EQ(out[2]["job_id"], 30);
  EXPECT_EQ(out[3]["array_task_id"], 5);
  EXPECT_EQ(TaskRanges({1, 2, 3, 5, 9, 10}), "1-3,5,9-10");
}

// The tasks lockstepd keeps in one record ("array_rest") and those split off pending print as
// one line; "-j 40_7" of a task still in the record picks that task alone.
nlohmann::json Rest(int array, const char* tasks) {
  nlohmann::json j = Job(array);
  j["array_job_id"] = array;
  j["array_rest"] = true;
  j["array_task_str"] = tasks;
  return j;
}

TEST(CollapsePendingArrays, TheArraysRecordJoinsItsSplitOffTasks) {
  nlohmann::json jobs = nlohmann::json::array();
  jobs.push_back(Job(40, 40, 0, "RUNNING"));
  jobs.push_back(Job(41, 40, 1));
  jobs.push_back(Job(42, 40, 2));
  jobs.push_back(Job(49, 40, 9));
  jobs.push_back(Rest(40, "[3-8,10-3999999%4]"));
  nlohmann::json out = CollapsePendingArrays(jobs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["array_task_str"], "[1-3999999]");
  EXPECT_EQ(out[1]["job_id"], 40);
  EXPECT_EQ(JoinTaskTexts({"17-20", "1,2", "0-15:4"}), "0-15:4,1-2,17-20");
  EXPECT_TRUE(TaskTextHolds("[0-15:4%2]", 12));
  EXPECT_FALSE(TaskTextHolds("[0-15:4%2]", 13));
  EXPECT_FALSE(TaskTextHolds("1,5-9", 10));
}

TEST(NarrowArrayRests, ATaskNamedAloneIsShownAlone) {
  nlohmann::json jobs = nlohmann::json::array();
  jobs.push_back(Rest(40, "[5-999]"));
  JobFilter by_task;
  by_task.ids = *ParseJobIdList("40_7,40_[8-9],40_2000");
  nlohmann::json out = NarrowArrayRests(jobs, by_task);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0]["array_task_id"], 7);
  EXPECT_EQ(out[2]["array_task_id"], 9);
  EXPECT_FALSE(out[0].contains("array_task_str"));
  JobFilter whole;
  whole.ids = *ParseJobIdList("40");
  EXPECT_EQ(NarrowArrayRests(jobs, whole), jobs);
}

}  // namespace
}  // namespace lockstep::cli
