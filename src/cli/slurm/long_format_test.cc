#include "cli/slurm/long_format.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

TEST(LongFormat, SqueueAndSinfoFieldsAsLetters) {
  struct Case {
    bool squeue;
    const char* spec;
    const char* want;  // nullptr: an error
  };
  const Case cases[] = {
      {true, "JobID,Name", "%20A%20j"},
      {true, "jobarrayid:12,state:.10,ReasonList", "%12i%.10T%20R"},
      {true, "username,timeused,timelimit,numnodes", "%20u%20M%20l%20D"},
      {true, "nosuchfield", nullptr},
      {false, "NodeList,StateLong,CPUsState", "%20N%20T%20C"},
      {false, "partition:10,gres:.30", "%10R%.30G"},
      {false, "JobID", nullptr},
  };
  for (const Case& c : cases) {
    Result<std::string> got = c.squeue ? SqueueLongFormat(c.spec) : SinfoLongFormat(c.spec);
    if (c.want == nullptr) {
      EXPECT_FALSE(got.ok()) << c.spec;
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.spec << ": " << got.status().message();
    EXPECT_EQ(*got, c.want) << c.spec;
  }
}

}  // namespace
}  // namespace lockstep::cli
