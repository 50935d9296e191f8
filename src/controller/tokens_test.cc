#include "controller/tokens.h"

#include <gtest/gtest.h>

#include "store/test_util.h"

namespace lockstep::controller {
namespace {

using store::OpenForTest;
using store::StoreOptions;
using store::TempDir;

StoreOptions Options(const TempDir& dir) {
  StoreOptions o;
  o.path = dir.File("state.db");
  o.sync = false;
  return o;
}

const Caller kAlice{1000, 100, "alice"};
constexpr Time kNow = 1'700'000'000;

TEST(TokenRegistry, IssuedTokenStandsForItsCaller) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<std::string> t = tokens.Issue(kAlice, 60, kNow);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->size(), 64u);
  Result<Caller> c = tokens.Authenticate(*t, kNow + 59);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->uid, 1000u);
  EXPECT_EQ(c->gid, 100u);
  EXPECT_EQ(c->user, "alice");
  // Two tokens are never the same.
  Result<std::string> again = tokens.Issue(kAlice, 60, kNow);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*t, *again);
}

TEST(TokenRegistry, StoresTheHashNeverTheToken) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<std::string> t = tokens.Issue(kAlice, 60, kNow);
  ASSERT_TRUE(t.ok());
  Result<std::vector<store::Record>> records = st->Scan(kTokenTable);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  const store::Record& r = records->front();
  EXPECT_EQ(r.key, TokenRegistry::KeyOf(*t));
  EXPECT_NE(r.key, *t);
  EXPECT_EQ(r.key.find(*t), std::string::npos);
  EXPECT_EQ(r.value.find(*t), std::string::npos);
  // SHA-256 of "abc", the FIPS 180-2 example.
  EXPECT_EQ(TokenRegistry::KeyOf("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(TokenRegistry, ExpiredTokenIsRejectedAndRemoved) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<std::string> t = tokens.Issue(kAlice, 60, kNow);
  ASSERT_TRUE(t.ok());
  Result<Caller> c = tokens.Authenticate(*t, kNow + 60);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(c.status().message(), "token expired");
  EXPECT_TRUE(st->Scan(kTokenTable)->empty());
  // Nor does it come back within its old lifetime.
  EXPECT_FALSE(tokens.Authenticate(*t, kNow).ok());
}

TEST(TokenRegistry, RemoveExpiredKeepsLiveTokens) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<std::string> short_lived = tokens.Issue(kAlice, 10, kNow);
  Result<std::string> long_lived = tokens.Issue(kAlice, 1000, kNow);
  ASSERT_TRUE(short_lived.ok() && long_lived.ok());
  Result<std::size_t> gone = tokens.RemoveExpired(kNow + 10);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, 1u);
  EXPECT_FALSE(tokens.Authenticate(*short_lived, kNow).ok());
  EXPECT_TRUE(tokens.Authenticate(*long_lived, kNow + 10).ok());
}

TEST(TokenRegistry, UnknownAndEmptyTokensAreRejected) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<std::string> t = tokens.Issue(kAlice, 60, kNow);
  ASSERT_TRUE(t.ok());
  for (std::string bad :
       {std::string(""), std::string("nope"), std::string(64, '0'), t->substr(0, 63), *t + "0"}) {
    Result<Caller> c = tokens.Authenticate(bad, kNow);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(tokens.Authenticate("nope", kNow).status().message(), "invalid token");
}

TEST(TokenRegistry, LifespanOutOfRangeIsRefused) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  EXPECT_EQ(tokens.Issue(kAlice, 0, kNow).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Issue(kAlice, -5, kNow).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Issue(kAlice, kMaxTokenLifespan + 1, kNow).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(st->Scan(kTokenTable)->empty());
}

TEST(TokenRegistry, TokensSurviveReopeningTheStore) {
  TempDir dir;
  std::string token;
  {
    auto st = OpenForTest(Options(dir));
    ASSERT_TRUE(st);
    TokenRegistry tokens(*st);
    Result<std::string> t = tokens.Issue(kAlice, 3600, kNow);
    ASSERT_TRUE(t.ok());
    token = *t;
  }
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st);
  Result<Caller> c = tokens.Authenticate(token, kNow + 1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->uid, 1000u);
}

}  // namespace
}  // namespace lockstep::controller
