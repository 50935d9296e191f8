#include "common/base64.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, RoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37) {
    Result<std::string> back = Base64Decode(Base64Encode(all.substr(0, n)));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, all.substr(0, n));
  }
}

TEST(Base64Test, RejectsWhatIsNotBase64) {
  EXPECT_FALSE(Base64Decode("Zg=").ok());
  EXPECT_FALSE(Base64Decode("Z!==").ok());
  EXPECT_FALSE(Base64Decode("=Zg=").ok());
}

}  // namespace
}  // namespace lockstep
