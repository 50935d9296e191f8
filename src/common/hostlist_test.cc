#include "common/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace lockstep {
namespace {

using Hosts = std::vector<std::string>;

Hosts Expand(std::string_view s) {
  Result<Hosts> r = ExpandHostlist(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : Hosts{};
}

std::string ExpandError(std::string_view s) {
  Result<Hosts> r = ExpandHostlist(s);
  EXPECT_FALSE(r.ok()) << s << " expanded to " << (r.ok() ? r->size() : 0) << " hosts";
  return r.ok() ? "" : r.status().message();
}

TEST(ExpandHostlistTest, PlainNames) {
  EXPECT_EQ(Expand("gpu001"), Hosts({"gpu001"}));
  EXPECT_EQ(Expand("a1,b2"), Hosts({"a1", "b2"}));
  EXPECT_EQ(Expand("a1 b2\tc3"), Hosts({"a1", "b2", "c3"}));
  EXPECT_EQ(Expand("a1, b2"), Hosts({"a1", "b2"}));
}

TEST(ExpandHostlistTest, ZeroPaddedRange) {
  Hosts h = Expand("gpu[001-064]");
  ASSERT_EQ(h.size(), 64u);
  EXPECT_EQ(h.front(), "gpu001");
  EXPECT_EQ(h[9], "gpu010");
  EXPECT_EQ(h.back(), "gpu064");
}

TEST(ExpandHostlistTest, RangesAndSingles) {
  Hosts h = Expand("linux[0-64,128]");
  ASSERT_EQ(h.size(), 66u);
  EXPECT_EQ(h[0], "linux0");
  EXPECT_EQ(h[10], "linux10");
  EXPECT_EQ(h[64], "linux64");
  EXPECT_EQ(h[65], "linux128");
  EXPECT_EQ(Expand("lx[15,18,32-33]"), Hosts({"lx15", "lx18", "lx32", "lx33"}));
}

TEST(ExpandHostlistTest, WidthComesFromLowNumber) {
  EXPECT_EQ(Expand("n[8-10]"), Hosts({"n8", "n9", "n10"}));
  EXPECT_EQ(Expand("n[08-10]"), Hosts({"n08", "n09", "n10"}));
  EXPECT_EQ(Expand("n[098-100]"), Hosts({"n098", "n099", "n100"}));
}

TEST(ExpandHostlistTest, CartesianProductFirstGroupOutermost) {
  EXPECT_EQ(Expand("rack[0-1]_blade[0-3]"),
            Hosts({"rack0_blade0", "rack0_blade1", "rack0_blade2", "rack0_blade3", "rack1_blade0",
                   "rack1_blade1", "rack1_blade2", "rack1_blade3"}));
  EXPECT_EQ(Expand("r[1,3]n[0-1,5]x"),
            Hosts({"r1n0x", "r1n1x", "r1n5x", "r3n0x", "r3n1x", "r3n5x"}));
  EXPECT_EQ(Expand("[1-2][7-8]"), Hosts({"17", "18", "27", "28"}));
}

TEST(ExpandHostlistTest, Mixtures) {
  EXPECT_EQ(Expand("a1,b[1-2]"), Hosts({"a1", "b1", "b2"}));
  EXPECT_EQ(Expand("b[1-2],a1,c[3]"), Hosts({"b1", "b2", "a1", "c3"}));
  EXPECT_EQ(Expand("x[1-2]-ib"), Hosts({"x1-ib", "x2-ib"}));
  EXPECT_EQ(Expand("a,a"), Hosts({"a", "a"}));  // duplicates kept
}

TEST(ExpandHostlistTest, Errors) {
  EXPECT_NE(ExpandError("gpu[1-2").find("'[' without ']'"), std::string::npos);
  EXPECT_NE(ExpandError("gpu1-2]").find("']' without '['"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[1-[2]]").find("nested"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[5-2]").find("range '5-2' is reversed"), std::string::npos);
  EXPECT_NE(ExpandError("").find("empty host name"), std::string::npos);
  EXPECT_NE(ExpandError("a,,b").find("empty host name at offset 2"), std::string::npos);
  EXPECT_NE(ExpandError("a,").find("empty host name"), std::string::npos);
  EXPECT_NE(ExpandError(" , ").find("empty host name"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[]").find("empty brackets"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[1,]").find("empty number"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[a-b]").find("'a' in brackets is not a number"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[1 - 2]").find("whitespace"), std::string::npos);
  EXPECT_NE(ExpandError("gpu[99999999999999999999]").find("too large"), std::string::npos);
  // Every message quotes the hostlist.
  EXPECT_NE(ExpandError("gpu[5-2]").find("'gpu[5-2]'"), std::string::npos);
}

TEST(ExpandHostlistTest, TooManyHosts) {
  EXPECT_NE(ExpandError("n[0-1000000]").find("more than 1000000"), std::string::npos);
  EXPECT_NE(ExpandError("n[0-999999,1000000-1000001]").find("more than"), std::string::npos);
  EXPECT_NE(ExpandError("a[0-999]b[0-999]c[0-1]").find("more than"), std::string::npos);
  EXPECT_NE(ExpandError("a[0-999999],b[0-1]").find("more than"), std::string::npos);
  EXPECT_EQ(Expand("a[0-999]b[0-999]").size(), 1'000'000u);
}

TEST(CompressHostlistTest, Examples) {
  EXPECT_EQ(CompressHostlist({"gpu001", "gpu002", "gpu003", "gpu010"}), "gpu[001-003,010]");
  EXPECT_EQ(CompressHostlist({"gpu001"}), "gpu001");
  EXPECT_EQ(CompressHostlist({}), "");
  EXPECT_EQ(CompressHostlist({"login", "gpu2", "gpu1", "login"}), "login,gpu[1-2]");
  EXPECT_EQ(CompressHostlist({"b1", "a1", "b2", "a3"}), "b[1-2],a[1,3]");
  EXPECT_EQ(CompressHostlist({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(CompressHostlist({"n099", "n100"}), "n[099-100]");
  EXPECT_EQ(CompressHostlist({"n100", "n099"}), "n[099-100]");
  EXPECT_EQ(CompressHostlist({"n1", "n01"}), "n1,n01");  // different widths, different groups
  EXPECT_EQ(CompressHostlist({"n5", "n5", "n4"}), "n[4-5]");
  EXPECT_EQ(CompressHostlist({"rack1_blade2", "rack1_blade3"}), "rack1_blade[2-3]");
  EXPECT_EQ(CompressHostlist({"7", "8"}), "[7-8]");
}

TEST(CompressHostlistTest, ExpandOfCompressIsTheSameSet) {
  std::mt19937 rng(7);
  const std::vector<std::string> prefixes = {"gpu", "n", "rack1_blade", "x-"};
  for (int round = 0; round < 200; ++round) {
    Hosts hosts;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const std::string& p = prefixes[rng() % prefixes.size()];
      const unsigned width = 1 + rng() % 4;
      std::string num = std::to_string(rng() % 1200);
      if (num.size() < width) num.insert(0, width - num.size(), '0');
      hosts.push_back(p + num);
    }
    const std::string compressed = CompressHostlist(hosts);
    Hosts expanded = Expand(compressed);
    std::set<std::string> want(hosts.begin(), hosts.end());
    std::set<std::string> got(expanded.begin(), expanded.end());
    EXPECT_EQ(got, want) << compressed;
    EXPECT_EQ(got.size(), expanded.size()) << "duplicates in " << compressed;
  }
}

}  // namespace
}  // namespace lockstep
