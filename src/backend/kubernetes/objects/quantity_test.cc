#include "backend/kubernetes/objects/quantity.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

std::int64_t Milli(std::string_view s) {
  Result<std::int64_t> r = ParseQuantityMilli(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}

std::int64_t Value(std::string_view s) {
  Result<std::int64_t> r = ParseQuantity(s);
  EXPECT_TRUE(r.ok()) << s << ": " << r.status().ToString();
  return r.ok() ? *r : -1;
}

TEST(Quantity, CpuToMilli) {
  EXPECT_EQ(Milli("3500m"), 3500);
  EXPECT_EQ(Milli("4"), 4000);
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("1."), 1000);
  EXPECT_EQ(Milli("1e3"), 1000000);
  EXPECT_EQ(Milli("95690m"), 95690);
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("+2"), 2000);
  EXPECT_EQ(Milli("1k"), 1000000);
}

TEST(Quantity, MilliRoundsUpAsTheApiserverDoes) {
  EXPECT_EQ(Milli("0.0001"), 1);  // 0.1m
  EXPECT_EQ(Milli("1.0005"), 1001);
}

TEST(Quantity, MemoryToBytes) {
  EXPECT_EQ(Value("16Gi"), 17179869184);
  EXPECT_EQ(Value("1G"), 1000000000);
  EXPECT_EQ(Value("500M"), 500000000);
  EXPECT_EQ(Value("128974848"), 128974848);
  EXPECT_EQ(Value("129e6"), 129000000);
  EXPECT_EQ(Value("129E6"), 129000000);
  EXPECT_EQ(Value("123Mi"), 128974848);
  EXPECT_EQ(Value("1Ki"), 1024);
  EXPECT_EQ(Value("1175470920Ki"), 1203682222080);
  EXPECT_EQ(Value("1.5Gi"), 1610612736);
  EXPECT_EQ(Value("1.5"), 2);  // rounded up
  EXPECT_EQ(Value("1500m"), 2);
  EXPECT_EQ(Value("12e-1"), 2);
  EXPECT_EQ(Value("1e-100"), 1);
  EXPECT_EQ(Value("0.000Gi"), 0);
  EXPECT_EQ(Value("8E"), 8000000000000000000);
  EXPECT_EQ(Value("7Ei"), 8070450532247928832);
}

TEST(Quantity, MiB) {
  EXPECT_EQ(BytesToMiBFloor(Value("123Mi")), 123);
  EXPECT_EQ(BytesToMiBFloor(Value("1G")), 953);
  EXPECT_EQ(BytesToMiBCeil(Value("1G")), 954);
  EXPECT_EQ(BytesToMiBCeil(0), 0);
}

TEST(Quantity, BadInputNamesTheValue) {
  for (std::string_view bad : {"", "abc", "1.2.3", "4 ", " 4", "1Gb", "m", "e3", "1e", "1e+",
                               "1ee3", "16gi", "100u", "1Ki2", "0x10", "1e99999"}) {
    Result<std::int64_t> r = ParseQuantity(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(bad) + "\""), std::string::npos)
        << r.status().message();
  }
  Result<std::int64_t> neg = ParseQuantityMilli("-1");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("negative"), std::string::npos);
  Result<std::int64_t> big = ParseQuantity("9Ei");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("too large"), std::string::npos);
  EXPECT_FALSE(ParseQuantityMilli("9223372036854776").ok());  // x1000 overflows
  EXPECT_FALSE(ParseQuantity("1234567890123456789012345678901").ok());
}

TEST(Quantity, Json) {
  EXPECT_EQ(*QuantityFromJson(nlohmann::json("4Gi")), 4294967296);
  EXPECT_EQ(*QuantityMilliFromJson(nlohmann::json(2)), 2000);
  Result<std::int64_t> r = QuantityFromJson(nlohmann::json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[]"), std::string::npos);
}

TEST(Quantity, Format) {
  EXPECT_EQ(FormatCpuMilli(4000), "4");
  EXPECT_EQ(FormatCpuMilli(3500), "3500m");
  EXPECT_EQ(FormatCpuMilli(0), "0");
  EXPECT_EQ(FormatMemoryMiB(16384), "16384Mi");
  // Round trip.
  EXPECT_EQ(Milli(FormatCpuMilli(3500)), 3500);
  EXPECT_EQ(BytesToMiBFloor(Value(FormatMemoryMiB(777))), 777);
}

}  // namespace
}  // namespace lockstep::kube
