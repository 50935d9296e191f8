#include "cli/format/sprio.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

// Golden outputs keep one report line a source line.
// clang-format off

// sprio(1)'s example jobs, listed out of order (sprio sorts by job id).
nlohmann::json Priorities() {
  return nlohmann::json::parse(R"({"priorities": [
    {"job_id": 65540, "user": "sally", "account": "physics", "partition": "batch",
     "priority": 62663, "age": 0.0, "fairshare": 51663.0, "job_size": 1000.0,
     "partition_factor": 10000.0, "qos": 0.0, "tres": 0.0, "nice": 0},
    {"job_id": 65539, "user": "fred", "account": "physics", "partition": "batch",
     "priority": 62664, "age": 0.0, "fairshare": 51664.0, "job_size": 1000.0,
     "partition_factor": 10000.0, "qos": 0.0, "tres": {"gres/gpu": 12.4}, "nice": 0,
     "qos_name": "normal"}
  ]})");
}

SprioWeights Weights() {
  SprioWeights w;
  w.age = 1000;
  w.fairshare = 100000;
  w.job_size = 1000;
  w.partition = 10000;
  return w;
}

std::string Sprio(const SprioOptions& options) {
  Result<std::string> out = FormatSprio(Priorities(), options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : "";
}

// Without the weights, sprio shows the factors lockstep computes.
TEST(Sprio, DefaultFormatGolden) {
  EXPECT_EQ(Sprio({}),
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION        QOS\n"
            "          65539 batch          62664          0          0      51664       1000      10000          0\n"
            "          65540 batch          62663          0          0      51663       1000      10000          0\n");
}

// With the weights, a factor whose weight is 0 (QOS here) has no column, as in sprio.c.
TEST(Sprio, WeightsDecideTheColumns) {
  SprioOptions options;
  options.weights = Weights();
  options.noheader = true;
  options.sort = "-i";
  EXPECT_EQ(Sprio(options),
            "          65540 batch          62663          0          0      51663       1000      10000\n"
            "          65539 batch          62664          0          0      51664       1000      10000\n");
}

TEST(Sprio, WeightsLine) {
  SprioOptions options;
  options.weights = Weights();
  options.weights_only = true;
  EXPECT_EQ(Sprio(options),
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION\n"
            "        Weights                               1       1000     100000       1000      10000\n");
}

TEST(Sprio, NormalizedGolden) {
  SprioOptions options;
  options.weights = Weights();
  options.normalized = true;
  options.sort = "Y";
  EXPECT_EQ(Sprio(options),
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION \n"
            "          65540 batch     0.00001458 0.0000000  0.5166300  1.0000000  1.0000000 \n"
            "          65539 batch     0.00001459 0.0000000  0.5166400  1.0000000  1.0000000 \n");
}

TEST(Sprio, LongFormatGolden) {
  SprioOptions options;
  options.long_format = true;
  options.sort = "u";
  Result<std::string> out = FormatSprio(Priorities(), options);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(
      out->substr(0, out->find('\n', out->find('\n') + 1) + 1),
      "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
      "          65539 batch         fred      62664          0          0          0      51664       1000      10000          0           0          gres/gpu=12\n");
}

// %c: the Priority object's cluster (sprio fills it from ClusterName), as Slurm's CLUSTER.
TEST(Sprio, ClusterColumn) {
  nlohmann::json rows = Priorities();
  for (auto& p : rows["priorities"]) p["cluster"] = "lab";
  SprioOptions options;
  options.format = "%.6i %c";
  Result<std::string> out = FormatSprio(rows, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->substr(0, out->find('\n', out->find('\n') + 1) + 1), " JOBID CLUSTER\n 65539 lab\n");
}

// An unknown letter is left out with the text after it, as Slurm 22.05's sprio does.
TEST(Sprio, UnknownLetterLeftOut) {
  SprioOptions options;
  options.format = "%i %X %Y";
  Result<std::string> out = FormatSprio(Priorities(), options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->substr(0, out->find('\n')), "JOBID PRIORITY");
}

TEST(Sprio, Errors) {
  SprioOptions options;
  options.normalized = true;
  EXPECT_EQ(FormatSprio(Priorities(), options).status().code(), StatusCode::kInvalidArgument);
  options = {};
  options.weights_only = true;
  EXPECT_FALSE(FormatSprio(Priorities(), options).ok());
  options = {};
  options.sort = "Z";
  EXPECT_FALSE(FormatSprio(Priorities(), options).ok());
  EXPECT_FALSE(FormatSprio(nlohmann::json{{"jobs", 1}}, {}).ok());
}

// clang-format on

}  // namespace
}  // namespace lockstep::cli
