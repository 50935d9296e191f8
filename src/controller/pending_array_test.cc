// An array's pending tasks as one record: ids computed from positions, tasks split off one by
// one or by id, the text squeue prints, and the store's record read back.
#include "controller/pending_array.h"

#include <gtest/gtest.h>

#include <numeric>

namespace lockstep::controller {
namespace {

JobEntry Template(JobId id) {
  JobEntry e;
  e.id = id;
  e.array_job_id = id;
  e.user = "alice";
  e.uid = 1000;
  return e;
}

TEST(PendingArrayTest, AFourMillionTaskArrayIsOneSegmentAndOneRange) {
  std::vector<std::uint32_t> indices(4'000'000);
  std::iota(indices.begin(), indices.end(), 0u);
  PendingArray a(Template(40), indices);
  EXPECT_EQ(a.task_count(), 4'000'000u);
  EXPECT_EQ(a.pending_count(), 4'000'000u);
  EXPECT_EQ(a.last_id(), 40u + 3'999'999u);
  EXPECT_EQ(a.TaskText(), "0-3999999");
  EXPECT_LT(a.ToJson().size(), 1000u) << "the store's record does not grow with the array";
}

TEST(PendingArrayTest, TasksAreSplitOffWithTheirComputedIds) {
  // --array=1,5,100-112:3 -> 1 5 100 103 106 109 112: job ids 10..16
  PendingArray a(Template(10), {1, 5, 100, 103, 106, 109, 112});
  EXPECT_EQ(a.TaskText(), "1,5,100-112:3");
  EXPECT_EQ(a.IdOfTask(103), 13u);
  EXPECT_FALSE(a.IdOfTask(104).has_value());
  EXPECT_EQ(a.FirstPendingId(), 10u);
  JobEntry first = a.Take(10);
  EXPECT_EQ(first.id, 10u);
  EXPECT_EQ(first.array_task_id, 1u);
  EXPECT_EQ(first.array_job_id, 10u);
  EXPECT_EQ(first.user, "alice");
  JobEntry middle = a.Take(*a.IdOfTask(106));
  EXPECT_EQ(middle.id, 14u);
  EXPECT_EQ(middle.array_task_id, 106u);
  EXPECT_FALSE(a.Holds(14));
  EXPECT_TRUE(a.Holds(13));
  EXPECT_EQ(a.pending_count(), 5u);
  EXPECT_EQ(a.TaskText(), "5,100,103,109,112");
  EXPECT_EQ(a.FirstPendingId(), 11u);
}

TEST(PendingArrayTest, TheStoredRecordReadsBackAsItWas) {
  PendingArray a(Template(7), {0, 2, 4, 6, 7, 8, 9});
  a.Take(9);
  a.Take(7);
  a.mutable_tmpl().held_by_user = true;
  Result<PendingArray> back = PendingArray::FromJson(a.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->TaskText(), a.TaskText());
  EXPECT_EQ(back->pending_count(), 5u);
  EXPECT_EQ(back->array_id(), 7u);
  EXPECT_EQ(back->last_id(), 13u);
  EXPECT_TRUE(back->tmpl().held_by_user);
  EXPECT_FALSE(back->Holds(9));
  EXPECT_TRUE(back->Holds(10));
}

TEST(PendingArrayTest, ARecordThatDoesNotAddUpIsRefused) {
  PendingArray a(Template(7), {0, 1, 2});
  std::string json = a.ToJson();
  std::string bad = json.substr(0, json.find("\"pending\"")) + "\"pending\":[[0,9]]}";
  EXPECT_FALSE(PendingArray::FromJson(bad).ok());
  EXPECT_FALSE(PendingArray::FromJson("[1]").ok());
}

}  // namespace
}  // namespace lockstep::controller
