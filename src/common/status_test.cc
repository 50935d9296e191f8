#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace lockstep {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = InvalidArgument("trace.swf:12: expected 18 fields, found 7");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "trace.swf:12: expected 18 fields, found 7");
  EXPECT_EQ(s.ToString(), "InvalidArgument: trace.swf:12: expected 18 fields, found 7");
}

TEST(StatusTest, EveryHelperHasItsCodeName) {
  EXPECT_EQ(NotFound("x").ToString(), "NotFound: x");
  EXPECT_EQ(PermissionDenied("x").ToString(), "PermissionDenied: x");
  EXPECT_EQ(FailedPrecondition("x").ToString(), "FailedPrecondition: x");
  EXPECT_EQ(IoError("x").ToString(), "IoError: x");
  EXPECT_EQ(Internal("x").ToString(), "Internal: x");
}

TEST(ResultTest, HoldsValue) {
  Result<std::string> r = std::string("gpu001");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(*r, "gpu001");
  EXPECT_EQ(r->size(), 6u);
}

TEST(ResultTest, HoldsError) {
  Result<int> r = NotFound("job 7");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "job 7");
}

TEST(ResultTest, OkStatusWithoutValueBecomesInternalError) {
  Result<int> r = Status::Ok();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, MovesOutMoveOnlyValue) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(42);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 42);
}

Status FailsWhen(bool fail, int& reached) {
  LOCKSTEP_RETURN_IF_ERROR(fail ? InvalidArgument("first step failed") : Status::Ok());
  ++reached;
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorPropagatesAndStops) {
  int reached = 0;
  EXPECT_TRUE(FailsWhen(false, reached).ok());
  EXPECT_EQ(reached, 1);
  Status s = FailsWhen(true, reached);
  EXPECT_EQ(s.message(), "first step failed");
  EXPECT_EQ(reached, 1);
}

TEST(StatusDeathTest, CheckAbortsWithExpression) {
  EXPECT_DEATH(LOCKSTEP_CHECK(1 + 1 == 3), "1 \\+ 1 == 3");
}

}  // namespace
}  // namespace lockstep
