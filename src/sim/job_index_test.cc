#include "sim/job_index.h"

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

std::vector<trace::TraceJob> JobsWithIds(std::initializer_list<std::int64_t> ids) {
  std::vector<trace::TraceJob> jobs;
  for (std::int64_t id : ids) jobs.emplace_back().id = id;
  return jobs;
}

std::vector<std::uint32_t> Ranks(const JobIndex& index, std::uint32_t jobs) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t p = 0; p < jobs; ++p) out.push_back(index.RankOf(p));
  return out;
}

std::vector<std::uint32_t> Positions(const JobIndex& index, std::initializer_list<JobId> ids) {
  std::vector<std::uint32_t> out;
  for (JobId id : ids) out.push_back(index.PositionOf(id));
  return out;
}

using Ids = std::vector<std::uint32_t>;

TEST(JobIndex, FindsCompactIdsInAnyOrder) {
  Result<JobIndex> index = JobIndex::Build(JobsWithIds({3, 1, 2, 5}));
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(Positions(*index, {1, 2, 3, 5}), (Ids{1, 2, 0, 3}));
  EXPECT_EQ(Positions(*index, {0, 4, 6, 1000}), (Ids(4, JobIndex::kNone)));
  EXPECT_EQ(Ranks(*index, 4), (Ids{2, 0, 1, 3}));
}

TEST(JobIndex, FindsSparseIdsInAnyOrder) {
  Result<JobIndex> index = JobIndex::Build(JobsWithIds({5'000'000'000, 7, 90'000, 8}));
  ASSERT_TRUE(index.ok()) << index.status().message();
  EXPECT_EQ(Positions(*index, {7, 8, 90'000, 5'000'000'000}), (Ids{1, 3, 2, 0}));
  EXPECT_EQ(Positions(*index, {0, 9, 89'999, 6'000'000'000}), (Ids(4, JobIndex::kNone)));
  EXPECT_EQ(Ranks(*index, 4), (Ids{3, 0, 2, 1}));
}

TEST(JobIndex, TraceOrderIsIdOrderWhenIdsAscend) {
  Result<JobIndex> index = JobIndex::Build(JobsWithIds({10, 20, 30}));
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(Ranks(*index, 3), (Ids{0, 1, 2}));
}

TEST(JobIndex, NamesTheFirstRepeatedIdInTraceOrder) {
  // Compact ids, then sparse ones: 4 is seen again before 2 is.
  for (auto ids : {JobsWithIds({2, 4, 3, 4, 2, 2}),
                   JobsWithIds({2, 4'000'000'000, 3, 4'000'000'000, 2, 2})}) {
    Result<JobIndex> index = JobIndex::Build(ids);
    ASSERT_FALSE(index.ok());
    EXPECT_EQ(index.status().message(),
              "the trace has job id " + std::to_string(ids[1].id) + " twice");
  }
}

TEST(JobIndex, TakesAnEmptyTrace) {
  Result<JobIndex> index = JobIndex::Build({});
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->PositionOf(1), JobIndex::kNone);
}

}  // namespace
}  // namespace lockstep::sim
