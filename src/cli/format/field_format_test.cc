#include "cli/format/field_format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/format/format_test_data.h"

namespace lockstep::cli {
namespace {

// Every formatter test runs in UTC, so time stamps are the same on any machine.
const bool kUtc = [] {
  setenv("TZ", "UTC", 1);
  tzset();
  return true;
}();

TEST(ParseFormat, SplitsPrefixFieldsAndSuffixes) {
  Result<FormatSpec> spec = ParseFormat("id=%.18i %9P|%j%#N", "squeue");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->prefix, "id=");
  ASSERT_EQ(spec->fields.size(), 4u);
  EXPECT_EQ(spec->fields[0].letter, 'i');
  EXPECT_EQ(spec->fields[0].width, 18);
  EXPECT_TRUE(spec->fields[0].right);
  EXPECT_EQ(spec->fields[0].suffix, " ");
  EXPECT_EQ(spec->fields[1].letter, 'P');
  EXPECT_EQ(spec->fields[1].width, 9);
  EXPECT_FALSE(spec->fields[1].right);
  EXPECT_EQ(spec->fields[1].suffix, "|");
  EXPECT_EQ(spec->fields[2].width, 0);
  EXPECT_EQ(spec->fields[2].suffix, "");
  EXPECT_TRUE(spec->fields[3].auto_width);
}

TEST(ParseFormat, DoublePercentIsALiteral) {
  Result<FormatSpec> spec = ParseFormat("%i%%done", "squeue");
  ASSERT_TRUE(spec.ok());
  ASSERT_EQ(spec->fields.size(), 1u);
  EXPECT_EQ(spec->fields[0].suffix, "%done");
}

TEST(ParseFormat, PercentWithoutLetterIsAnError) {
  EXPECT_FALSE(ParseFormat("%i %", "squeue").ok());
  EXPECT_FALSE(ParseFormat("%.18", "squeue").ok());
  EXPECT_FALSE(ParseFormat("%.%i", "squeue").ok());
  EXPECT_EQ(ParseFormat("%.18", "squeue").status().code(), StatusCode::kInvalidArgument);
}

TEST(FitField, LeftJustifiedIsCutAndPadded) {
  EXPECT_EQ(FitField("train", 8, false, true), "train   ");
  EXPECT_EQ(FitField("preprocess", 8, false, true), "preproce");
  EXPECT_EQ(FitField("preprocess", 8, false, false), "preproce");  // "%.8s" always cuts
}

TEST(FitField, RightJustifiedIsPaddedAndCutOnlyWhenAsked) {
  EXPECT_EQ(FitField("42", 6, true, true), "    42");
  EXPECT_EQ(FitField("1-00:00:00", 9, true, true), "1-00:00:0");
  EXPECT_EQ(FitField("1-00:00:00", 9, true, false), "1-00:00:00");
}

TEST(FitField, WidthZeroPrintsAsIs) {
  EXPECT_EQ(FitField("gpu[001-064]", 0, true, true), "gpu[001-064]");
}

TEST(Durations, SqueueShapes) {
  EXPECT_EQ(SqueueDuration(0), "0:00");
  EXPECT_EQ(SqueueDuration(62), "1:02");
  EXPECT_EQ(SqueueDuration(3723), "1:02:03");
  EXPECT_EQ(SqueueDuration(86400), "1-00:00:00");
  EXPECT_EQ(SqueueDuration(-1), "INVALID");
  EXPECT_EQ(SqueueDuration(366LL * 86400), "INVALID");
  EXPECT_EQ(SinfoDuration(366LL * 86400), "366-00:00:00");
}

TEST(Durations, LongShapes) {
  EXPECT_EQ(LongDuration(0), "00:00:00");
  EXPECT_EQ(LongDuration(3723), "01:02:03");
  EXPECT_EQ(LongDuration(93784), "1-02:03:04");
  EXPECT_EQ(LongDuration(-5), "INVALID");
}

TEST(TimeStrings, LocalTimeStampAndDateLine) {
  EXPECT_EQ(TimeStamp(testdata::kNow), "2025-11-29T08:06:40");
  EXPECT_EQ(DateLine(testdata::kNow), "Sat Nov 29 08:06:40 2025");
}

TEST(ConvertUnits, ScalesOnlyWhenExact) {
  EXPECT_EQ(ConvertUnits(0, 2), "0");
  EXPECT_EQ(ConvertUnits(4096, 2), "4G");
  EXPECT_EQ(ConvertUnits(1536, 2), "1536M");
  EXPECT_EQ(ConvertUnits(524288, 2), "512G");
  EXPECT_EQ(ConvertUnits(64, 0), "64");
}

TEST(Json, TolerantReads) {
  nlohmann::json j = {{"s", "x"}, {"i", 7}, {"f", 2.5}, {"n", nullptr}, {"b", true}};
  EXPECT_EQ(JStr(j, "s"), "x");
  EXPECT_EQ(JStr(j, "i"), "");
  EXPECT_EQ(JStr(j, "missing"), "");
  EXPECT_EQ(JIntOr(j, "i", 0), 7);
  EXPECT_EQ(JIntOr(j, "f", 0), 2);
  EXPECT_EQ(JIntOr(j, "s", -1), -1);
  EXPECT_TRUE(JIsNull(j, "n"));
  EXPECT_FALSE(JIsNull(j, "missing"));
  EXPECT_TRUE(JBool(j, "b"));
  EXPECT_EQ(JStr(nlohmann::json::array(), "s"), "");
}

TEST(Json, RecordsUnwrapsTheApiEnvelope) {
  nlohmann::json wrapped = {{"jobs", {{{"job_id", 1}}, {{"job_id", 2}}}}};
  auto records = Records(wrapped, "jobs");
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->size(), 2u);
  EXPECT_FALSE(Records(nlohmann::json{{"nodes", 1}}, "jobs").ok());
  EXPECT_FALSE(Records(nlohmann::json::array({1, 2}), "jobs").ok());
  EXPECT_TRUE(Records(nullptr, "jobs").ok());
}

TEST(Hostlists, SortedLikeSlurm) {
  EXPECT_EQ(SortedHostlist({"b2", "a10", "a9"}), "a[9-10],b2");
  EXPECT_EQ(SortedHostlist({"adev9", "adev10", "adev8"}), "adev[8-10]");
  EXPECT_TRUE(HostNameLess("n9", "n10"));
}

}  // namespace
}  // namespace lockstep::cli
