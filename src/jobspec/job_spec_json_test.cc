#include <gtest/gtest.h>

#include "jobspec/job_spec.h"

namespace lockstep::jobspec {
namespace {

// Every field set to something other than its default.
JobSpec FullSpec() {
  JobSpec s;
  s.name = "train";
  s.partition = "gpu";
  s.account = "ml";
  s.qos = "high";
  s.min_nodes = 2;
  s.max_nodes = 4;
  s.ntasks = 16;
  s.ntasks_per_node = 8;
  s.cpus_per_task = 6;
  s.mem_mb = 65536;
  s.mem_per_cpu_mb = 2048;
  s.mem_per_gpu_mb = 81920;
  s.gpus = 16;
  s.gpus_per_node = 8;
  s.gpus_per_task = 1;
  s.gpu_type = "h100";
  s.exclusive = true;
  s.constraint = "ib&nvlink";
  s.max_switches = 1;
  s.switches_wait = 300;
  s.time_limit = kUnlimited;
  s.begin_time = 1'700'000'000;
  s.array = ArraySpec{{0, 4, 8}, 2, "0-8:4%2"};
  s.dependencies = {{DependencyType::kAfterOk, 12, 0, false},
                    {DependencyType::kAfter, 13, 4, true},
                    {DependencyType::kAfterNotOk, 14, 0, false},
                    {DependencyType::kAfterAny, 15, 0, false},
                    {DependencyType::kSingleton, 0, 0, false}};
  s.dependencies_any = true;
  s.requeue = false;
  s.hold = true;
  s.nice = -5;
  s.work_dir = "/scratch/alice";
  s.output = "logs/%x-%j.out";
  s.error = "logs/%x-%j.err";
  s.export_mode = "ALL,X=1";
  s.environment = {{"PATH", "/bin"}, {"X", "1"}, {"QUOTE", "a \"b\"\n\tc"}};
  s.script = "#!/bin/bash\n#SBATCH -N 2\nsrun python train.py \"$@\"\n";
  s.script_args = {"--lr", "0.1"};
  s.container_image = "nvcr.io/nvidia/pytorch:24.01";
  s.parsable = true;
  s.warnings = {"sbatch: --mail-type has no effect in lockstep and is ignored"};
  return s;
}

void ExpectSpecEq(const JobSpec& a, const JobSpec& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.partition, b.partition);
  EXPECT_EQ(a.account, b.account);
  EXPECT_EQ(a.qos, b.qos);
  EXPECT_EQ(a.min_nodes, b.min_nodes);
  EXPECT_EQ(a.max_nodes, b.max_nodes);
  EXPECT_EQ(a.ntasks, b.ntasks);
  EXPECT_EQ(a.ntasks_per_node, b.ntasks_per_node);
  EXPECT_EQ(a.cpus_per_task, b.cpus_per_task);
  EXPECT_EQ(a.mem_mb, b.mem_mb);
  EXPECT_EQ(a.mem_per_cpu_mb, b.mem_per_cpu_mb);
  EXPECT_EQ(a.mem_per_gpu_mb, b.mem_per_gpu_mb);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.gpus_per_node, b.gpus_per_node);
  EXPECT_EQ(a.gpus_per_task, b.gpus_per_task);
  EXPECT_EQ(a.gpu_type, b.gpu_type);
  EXPECT_EQ(a.exclusive, b.exclusive);
  EXPECT_EQ(a.constraint, b.constraint);
  EXPECT_EQ(a.max_switches, b.max_switches);
  EXPECT_EQ(a.switches_wait, b.switches_wait);
  EXPECT_EQ(a.time_limit, b.time_limit);
  EXPECT_EQ(a.begin_time, b.begin_time);
  ASSERT_EQ(a.array.has_value(), b.array.has_value());
  if (a.array) {
    EXPECT_EQ(a.array->indices, b.array->indices);
    EXPECT_EQ(a.array->max_running, b.array->max_running);
    EXPECT_EQ(a.array->text, b.array->text);
  }
  ASSERT_EQ(a.dependencies.size(), b.dependencies.size());
  for (std::size_t i = 0; i < a.dependencies.size(); ++i) {
    EXPECT_EQ(a.dependencies[i].type, b.dependencies[i].type) << i;
    EXPECT_EQ(a.dependencies[i].job, b.dependencies[i].job) << i;
    EXPECT_EQ(a.dependencies[i].array_task, b.dependencies[i].array_task) << i;
    EXPECT_EQ(a.dependencies[i].has_task, b.dependencies[i].has_task) << i;
  }
  EXPECT_EQ(a.dependencies_any, b.dependencies_any);
  EXPECT_EQ(a.requeue, b.requeue);
  EXPECT_EQ(a.hold, b.hold);
  EXPECT_EQ(a.nice, b.nice);
  EXPECT_EQ(a.work_dir, b.work_dir);
  EXPECT_EQ(a.output, b.output);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.export_mode, b.export_mode);
  EXPECT_EQ(a.environment, b.environment);
  EXPECT_EQ(a.script, b.script);
  EXPECT_EQ(a.script_args, b.script_args);
  EXPECT_EQ(a.container_image, b.container_image);
  EXPECT_EQ(a.parsable, b.parsable);
  EXPECT_EQ(a.warnings, b.warnings);
}

std::string ErrorOf(std::string_view json) {
  Result<JobSpec> r = JobSpecFromJson(json);
  EXPECT_FALSE(r.ok()) << json;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(JobSpecJsonTest, FullSpecRoundTrips) {
  const JobSpec full = FullSpec();
  const std::string json = JobSpecToJson(full);
  Result<JobSpec> back = JobSpecFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSpecEq(*back, full);
  EXPECT_EQ(JobSpecToJson(*back), json);
}

TEST(JobSpecJsonTest, DefaultSpecRoundTrips) {
  Result<JobSpec> back = JobSpecFromJson(JobSpecToJson(JobSpec{}));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSpecEq(*back, JobSpec{});
  EXPECT_FALSE(back->requeue.has_value());
  EXPECT_FALSE(back->array.has_value());
}

TEST(JobSpecJsonTest, KeysFollowTheStructAndEnumsAreWords) {
  const std::string json = JobSpecToJson(FullSpec());
  EXPECT_EQ(json.rfind("{\"name\":\"train\",\"partition\":\"gpu\"", 0), 0u) << json;
  EXPECT_NE(json.find("\"type\":\"afterok\""), std::string::npos);
  EXPECT_NE(json.find("\"type\":\"singleton\""), std::string::npos);
  EXPECT_NE(json.find("\"requeue\":false"), std::string::npos);
  EXPECT_NE(JobSpecToJson(JobSpec{}).find("\"requeue\":null"), std::string::npos);
}

TEST(JobSpecJsonTest, MissingKeysTakeDefaults) {
  Result<JobSpec> r = JobSpecFromJson(R"({"name": "x", "ntasks": 4, "requeue": true})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "x");
  EXPECT_EQ(r->ntasks, 4);
  EXPECT_EQ(r->requeue, std::optional<bool>(true));
  EXPECT_EQ(r->export_mode, "ALL");
  ASSERT_TRUE(JobSpecFromJson("{}").ok());
  Result<JobSpec> n = JobSpecFromJson(R"({"requeue": null, "array": null})");
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->requeue.has_value());
}

TEST(JobSpecJsonTest, UnknownKeysAreErrors) {
  EXPECT_EQ(ErrorOf(R"({"name": "x", "nodes": 2})"), "job spec: unknown key 'nodes'");
  EXPECT_EQ(ErrorOf(R"({"array": {"indices": [1], "step": 2}})"),
            "job spec: unknown key 'array.step'");
  EXPECT_EQ(ErrorOf(R"({"dependencies": [{"type": "after", "job": 1, "delay": 5}]})"),
            "job spec: unknown key 'dependencies[0].delay'");
}

// Found by fuzz/jobspec_json_fuzz: indices that disagreed with the text were kept, but only the
// text is written back, so the job's tasks changed when its record was read again.
TEST(JobSpecJsonTest, ArrayIndicesThatAreNotTheTextsAreErrors) {
  EXPECT_EQ(ErrorOf(R"({"array": {"indices": [7], "text": "0-3"}})"),
            "job spec: 'array.indices' are not those of 'array.text' (0-3)");
  Result<JobSpec> same = JobSpecFromJson(R"({"array": {"indices": [0, 2], "text": "0-2:2"}})");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  Result<JobSpec> back = JobSpecFromJson(JobSpecToJson(*same));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *same);
  EXPECT_EQ(ErrorOf(R"({"array": {"text": "x"}})").rfind("job spec: 'array.text': x ", 0), 0u);
}

TEST(JobSpecJsonTest, WrongTypesNameTheKey) {
  EXPECT_EQ(ErrorOf(R"({"ntasks": "4"})"), "job spec: 'ntasks' must be an integer");
  EXPECT_EQ(ErrorOf(R"({"ntasks": 4.5})"), "job spec: 'ntasks' must be an integer");
  EXPECT_EQ(ErrorOf(R"({"hold": "yes"})"), "job spec: 'hold' must be true or false");
  EXPECT_EQ(ErrorOf(R"({"name": 3})"), "job spec: 'name' must be a string");
  EXPECT_EQ(ErrorOf(R"({"requeue": 1})"), "job spec: 'requeue' must be true, false or null");
  EXPECT_EQ(ErrorOf(R"({"environment": {"A": "1", "B": 2}})"),
            "job spec: 'environment.B' must be a string");
  EXPECT_EQ(ErrorOf(R"({"environment": []})"),
            "job spec: 'environment' must be an object of strings");
  EXPECT_EQ(ErrorOf(R"({"script_args": ["a", 1]})"), "job spec: 'script_args[1]' must be a string");
  EXPECT_EQ(ErrorOf(R"({"array": {"indices": [1, -1]}})"),
            "job spec: 'array.indices[1]' must be an integer from 0 to 4294967295");
  EXPECT_EQ(ErrorOf(R"({"array": 5})"), "job spec: 'array' must be an object");
  EXPECT_EQ(ErrorOf(R"({"dependencies": [{"type": "before"}]})"),
            "job spec: 'dependencies[0].type' must be one of after, afterany, afterok, "
            "afternotok, singleton, aftercorr");
  EXPECT_EQ(ErrorOf(R"({"dependencies": {}})"),
            "job spec: 'dependencies' must be an array of dependencies");
}

TEST(JobSpecJsonTest, OutOfRangeIntegers) {
  EXPECT_EQ(ErrorOf(R"({"ntasks": 3000000000})"),
            "job spec: 'ntasks' must be an integer from -2147483648 to 2147483647");
  EXPECT_EQ(ErrorOf(R"({"dependencies": [{"job": -1}]})"),
            "job spec: 'dependencies[0].job' must be an integer from 0 to 18446744073709551615");
  Result<JobSpec> big = JobSpecFromJson(R"({"dependencies": [{"job": 18446744073709551615}]})");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->dependencies[0].job, 18446744073709551615u);
}

// Issue 27: a number beyond a double's range made the parse throw out_of_range, which came
// back as an internal error with the JSON library's text (a 500). It names the field now.
TEST(JobSpecJsonTest, RegressionANumberBeyondADoubleNamesItsField) {
  EXPECT_EQ(ErrorOf(R"({"ntasks": 1e999})"), "job spec: 'ntasks' is a number out of range");
  EXPECT_EQ(ErrorOf(R"({"name": "x", "dependencies": [{"job": 1}, {"type": "after", "job": -1e400}]})"),
            "job spec: 'dependencies[1].job' is a number out of range");
  EXPECT_EQ(ErrorOf(R"({"environment": {"A": "1", "B": 2e308}})"),
            "job spec: 'environment.B' is a number out of range");
  EXPECT_EQ(ErrorOf("1e999"), "job spec: a number out of range");
}

TEST(JobSpecJsonTest, NotJsonOrNotAnObject) {
  EXPECT_EQ(ErrorOf("{").rfind("job spec: invalid JSON: parse error", 0), 0u);
  EXPECT_EQ(ErrorOf("").rfind("job spec: invalid JSON: ", 0), 0u);
  EXPECT_EQ(ErrorOf("[]"), "job spec: must be a JSON object");
  EXPECT_EQ(ErrorOf("null"), "job spec: must be a JSON object");
}

// Validate refuses such a script; a variable of the submitter's environment may still have them.
TEST(JobSpecJsonTest, BytesThatAreNotUtf8DoNotThrow) {
  JobSpec s;
  s.environment["LEGACY"] = "caf\xe9";
  const std::string json = JobSpecToJson(s);
  Result<JobSpec> back = JobSpecFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->environment["LEGACY"], "caf\xef\xbf\xbd");  // U+FFFD
}

}  // namespace
}  // namespace lockstep::jobspec
