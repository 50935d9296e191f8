#include "common/duration.h"

#include <gtest/gtest.h>

#include <string>

namespace lockstep {
namespace {

Seconds Parse(std::string_view s) {
  Result<Seconds> r = ParseSlurmDuration(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -12345;
}

std::string ParseError(std::string_view s) {
  Result<Seconds> r = ParseSlurmDuration(s);
  EXPECT_FALSE(r.ok()) << s << " parsed as " << (r.ok() ? *r : 0);
  return r.ok() ? "" : r.status().message();
}

TEST(ParseSlurmDurationTest, EveryForm) {
  EXPECT_EQ(Parse("0"), 0);
  EXPECT_EQ(Parse("90"), 90 * 60);          // minutes
  EXPECT_EQ(Parse("90:30"), 90 * 60 + 30);  // minutes:seconds
  EXPECT_EQ(Parse("36:00:00"), 36 * 3600);  // hours:minutes:seconds
  EXPECT_EQ(Parse("1:02:03"), 3723);
  EXPECT_EQ(Parse("2-12"), 2 * 86400 + 12 * 3600);               // days-hours
  EXPECT_EQ(Parse("2-12:30"), 2 * 86400 + 12 * 3600 + 30 * 60);  // days-hours:minutes
  EXPECT_EQ(Parse("2-12:30:15"), 2 * 86400 + 12 * 3600 + 1815);  // days-h:m:s
  EXPECT_EQ(Parse("0-00:00:01"), 1);
  EXPECT_EQ(Parse("007"), 7 * 60);
}

TEST(ParseSlurmDurationTest, Unlimited) {
  EXPECT_EQ(Parse("UNLIMITED"), kUnlimited);
  EXPECT_EQ(Parse("unlimited"), kUnlimited);
  EXPECT_EQ(Parse("Infinite"), kUnlimited);
  EXPECT_EQ(Parse("INFINITE"), kUnlimited);
  EXPECT_EQ(Parse("-1"), kUnlimited);
}

TEST(ParseSlurmDurationTest, ErrorsQuoteTheText) {
  EXPECT_NE(ParseError("").find("empty"), std::string::npos);
  EXPECT_NE(ParseError("abc").find("'abc'"), std::string::npos);
  EXPECT_NE(ParseError("1:2:3:4").find("too many"), std::string::npos);
  EXPECT_NE(ParseError("1:75").find("seconds (75) must be below 60"), std::string::npos);
  EXPECT_NE(ParseError("1:60:00").find("minutes (60)"), std::string::npos);
  EXPECT_NE(ParseError("1-24").find("hours (24) must be below 24"), std::string::npos);
  EXPECT_NE(ParseError("1-").find("hours is empty"), std::string::npos);
  EXPECT_NE(ParseError("-5").find("days is empty"), std::string::npos);
  EXPECT_NE(ParseError("1-2-3").find("'2-3'"), std::string::npos);
  EXPECT_NE(ParseError("1::2").find("minutes is empty"), std::string::npos);
  EXPECT_NE(ParseError(" 10").find("' 10'"), std::string::npos);
  EXPECT_NE(ParseError("10m").find("'10m'"), std::string::npos);
  EXPECT_NE(ParseError("+10").find("not a number"), std::string::npos);
  EXPECT_NE(ParseError("99999999999999999999").find("too large"), std::string::npos);
  EXPECT_NE(ParseError("1000000000001-00").find("too large"), std::string::npos);
  EXPECT_NE(ParseError("unlimitedx").find("'unlimitedx'"), std::string::npos);
}

TEST(FormatSlurmDurationTest, SqueueStyle) {
  EXPECT_EQ(FormatSlurmDuration(0), "0:00");
  EXPECT_EQ(FormatSlurmDuration(59), "0:59");
  EXPECT_EQ(FormatSlurmDuration(62), "1:02");
  EXPECT_EQ(FormatSlurmDuration(3599), "59:59");
  EXPECT_EQ(FormatSlurmDuration(3600), "1:00:00");
  EXPECT_EQ(FormatSlurmDuration(3723), "1:02:03");
  EXPECT_EQ(FormatSlurmDuration(86399), "23:59:59");
  EXPECT_EQ(FormatSlurmDuration(86400), "1-00:00:00");
  EXPECT_EQ(FormatSlurmDuration(93784), "1-02:03:04");
  EXPECT_EQ(FormatSlurmDuration(400 * 86400 + 5), "400-00:00:05");
  EXPECT_EQ(FormatSlurmDuration(kUnlimited), "UNLIMITED");
  EXPECT_EQ(FormatSlurmDuration(-1), "INVALID");
}

TEST(FormatSlurmDurationTest, RoundTripsThroughParse) {
  for (Seconds s : {Seconds{0}, Seconds{1}, Seconds{61}, Seconds{3600}, Seconds{3661},
                    Seconds{86400}, Seconds{90061}, Seconds{10 * 86400 + 3599}}) {
    EXPECT_EQ(Parse(FormatSlurmDuration(s)), s) << FormatSlurmDuration(s);
  }
}

TEST(ParseMemoryMbTest, Units) {
  auto mb = [](std::string_view s) {
    Result<std::int64_t> r = ParseMemoryMb(s);
    EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
    return r.ok() ? *r : -1;
  };
  EXPECT_EQ(mb("4096"), 4096);
  EXPECT_EQ(mb("0"), 0);
  EXPECT_EQ(mb("512M"), 512);
  EXPECT_EQ(mb("512m"), 512);
  EXPECT_EQ(mb("16G"), 16384);
  EXPECT_EQ(mb("16g"), 16384);
  EXPECT_EQ(mb("1T"), 1048576);
  EXPECT_EQ(mb("2048K"), 2);
  EXPECT_EQ(mb("2049K"), 3);  // kilobytes round up, as Slurm does
  EXPECT_EQ(mb("1k"), 1);
}

TEST(ParseMemoryMbTest, Errors) {
  auto err = [](std::string_view s) {
    Result<std::int64_t> r = ParseMemoryMb(s);
    EXPECT_FALSE(r.ok()) << s;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(err("").find("empty"), std::string::npos);
  EXPECT_NE(err("G").find("'G'"), std::string::npos);
  EXPECT_NE(err("-5").find("'-5'"), std::string::npos);
  EXPECT_NE(err("16X").find("unknown unit 'X'"), std::string::npos);
  EXPECT_NE(err("16GB").find("unknown unit 'GB'"), std::string::npos);
  EXPECT_NE(err("99999999999999999999").find("too large"), std::string::npos);
  EXPECT_NE(err("99999999999999T").find("too large"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
