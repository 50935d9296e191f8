// The job record's persistence (EntryToJson, EntryFromJson) and the interned specs' cached JSON
// it is written with.
#include "controller/job_entry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "controller/spec_interner.h"

namespace lockstep::controller {
namespace {

jobspec::JobSpec TrainingSpec() {
  jobspec::JobSpec s;
  s.name = "train";
  s.partition = "gpu";
  s.min_nodes = s.max_nodes = 4;
  s.ntasks = 32;
  s.gpus_per_task = 1;
  s.time_limit = 3600;
  s.external = "ml/llama";
  return s;
}

JobEntry RunningEntry(std::shared_ptr<const jobspec::JobSpec> spec) {
  JobEntry e;
  e.id = 42;
  e.spec = std::move(spec);
  e.uid = 1000;
  e.user = "alice";
  e.state = JobState::kRunning;
  e.submit_time = 1'700'000'000;
  e.start_time = 1'700'000'060;
  e.placement = {{"gpu-001", 64, 512'000, 0xff}, {"gpu-002", 64, 512'000, 0xff}};
  return e;
}

TEST(EntryJson, RoundTripsWithTheSpecSplicedIn) {
  SpecInterner specs;
  JobEntry e = RunningEntry(specs.Intern(TrainingSpec()));
  const std::string text = EntryToJson(e, *specs.JsonOf(e.spec));
  ASSERT_TRUE(nlohmann::json::accept(text)) << text;
  EXPECT_EQ(nlohmann::json::parse(text), nlohmann::json::parse(EntryToJson(e)));
  Result<JobEntry> back = EntryFromJson(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back->spec, *e.spec);
  EXPECT_EQ(back->id, 42u);
  EXPECT_EQ(back->state, JobState::kRunning);
  EXPECT_EQ(back->start_time, e.start_time);
  ASSERT_EQ(back->placement.size(), 2u);
  EXPECT_EQ(back->placement[1].node, "gpu-002");
  EXPECT_EQ(back->placement[1].gpus, 0xffu);
}

TEST(EntryJson, HeadReadsWhatRecoveryDecidesOnWithoutTheSpec) {
  SpecInterner specs;
  JobEntry e = RunningEntry(specs.Intern(TrainingSpec()));
  e.state = JobState::kTimeout;
  e.end_time = 1'700'003'700;
  e.array_job_id = 40;
  e.array_task_id = 2;
  Result<JobRecordHead> head = HeadFromJson(EntryToJson(e, *specs.JsonOf(e.spec)));
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->id, 42u);
  EXPECT_EQ(head->state, JobState::kTimeout);
  EXPECT_EQ(head->submit_time, e.submit_time);
  EXPECT_EQ(head->end_time, e.end_time);
  EXPECT_EQ(head->user, "alice");
  EXPECT_EQ(head->array_job_id, 40u);
  EXPECT_EQ(head->array_task_id, 2u);
  EXPECT_FALSE(HeadFromJson(R"({"id":1})").ok());
  EXPECT_FALSE(HeadFromJson("not json").ok());
}

TEST(SpecInterner, SerializesEachSpecOnceAndEachChangeAnew) {
  SpecInterner specs;
  std::shared_ptr<const jobspec::JobSpec> a = specs.Intern(TrainingSpec());
  std::shared_ptr<const std::string> first = specs.JsonOf(a);
  EXPECT_EQ(*first, jobspec::JobSpecToJson(*a));
  EXPECT_EQ(specs.JsonOf(specs.Intern(TrainingSpec())), first);  // the same spec: kept

  jobspec::JobSpec longer = TrainingSpec();  // scontrol update replaces the spec
  longer.time_limit = 7200;
  std::shared_ptr<const jobspec::JobSpec> b = specs.Intern(longer);
  EXPECT_NE(*specs.JsonOf(b), *first);
  EXPECT_EQ(nlohmann::json::parse(*specs.JsonOf(b))["time_limit"], 7200);

  // A spec the interner never made is serialized as it is, not confused with its equal.
  auto outsider = std::make_shared<const jobspec::JobSpec>(longer);
  EXPECT_EQ(*specs.JsonOf(outsider), jobspec::JobSpecToJson(longer));
}

TEST(SpecInterner, ForgetsTheJsonOfSpecsNoJobHolds) {
  SpecInterner specs;
  std::shared_ptr<const jobspec::JobSpec> a = specs.Intern(TrainingSpec());
  std::weak_ptr<const std::string> json = specs.JsonOf(a);
  a.reset();
  EXPECT_EQ(specs.size(), 0u);  // swept
  EXPECT_TRUE(json.expired());
}

TEST(SpecInterner, KeepsJsonOnlyWithinItsBudget) {
  const std::size_t one = jobspec::JobSpecToJson(TrainingSpec()).size();
  SpecInterner specs(3 * one + one / 2);  // room for three
  std::vector<std::shared_ptr<const jobspec::JobSpec>> held;
  for (int i = 0; i < 6; ++i) {
    jobspec::JobSpec s = TrainingSpec();
    s.nice = i;  // six specs that ask alike but for their nice value
    held.push_back(specs.Intern(s));
    EXPECT_EQ(*specs.JsonOf(held.back()), jobspec::JobSpecToJson(s));  // kept or not: right
  }
  EXPECT_LE(specs.json_bytes(), 3 * one + one / 2);
  EXPECT_GE(specs.json_bytes(), 2 * one);
  held.clear();
  EXPECT_EQ(specs.size(), 0u);  // the sweep gives their JSON back
  EXPECT_EQ(specs.json_bytes(), 0u);
}

}  // namespace
}  // namespace lockstep::controller
