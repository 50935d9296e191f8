#include "controller/tokens.h"

#include <gtest/gtest.h>

#include <map>

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
const Caller kBob{1001, 100, "bob"};
const Caller kRoot{0, 0, "root"};
constexpr Time kNow = 1'700'000'000;

// The host's users as the tests want them (the machine running them may have no alice).
UserNameOf KnownUsers(std::map<std::uint32_t, std::string> users = {
                          {0, "root"}, {1000, "alice"}, {1001, "bob"}}) {
  return [users = std::move(users)](std::uint32_t uid) -> std::optional<std::string> {
    auto it = users.find(uid);
    if (it == users.end()) return std::nullopt;
    return it->second;
  };
}

TEST(TokenRegistry, IssuedTokenStandsForItsCaller) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st, KnownUsers());
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
  TokenRegistry tokens(*st, KnownUsers());
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
  TokenRegistry tokens(*st, KnownUsers());
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
  TokenRegistry tokens(*st, KnownUsers());
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
  TokenRegistry tokens(*st, KnownUsers());
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
  TokenRegistry tokens(*st, KnownUsers());
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
    TokenRegistry tokens(*st, KnownUsers());
    Result<std::string> t = tokens.Issue(kAlice, 3600, kNow);
    ASSERT_TRUE(t.ok());
    token = *t;
  }
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st, KnownUsers());
  Result<Caller> c = tokens.Authenticate(token, kNow + 1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->user, "alice");
  EXPECT_EQ(c->uid, 1000u);
}

// Issue 17: a deleted user's token still submitted jobs as the orphaned uid.
TEST(TokenRegistry, RegressionATokenWhoseUserIsGoneFromTheHostIsRefused) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  // The host's real user database: no user has this uid.
  const Caller ghost{3'999'999'999u, 100, "ghost"};
  ASSERT_FALSE(SystemUserNameOf(ghost.uid).has_value());
  TokenRegistry system(*st);
  Result<std::string> t = system.Issue(ghost, 3600, kNow);
  ASSERT_TRUE(t.ok());
  Result<Caller> c = system.Authenticate(*t, kNow + 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(c.status().message(),
            "token refused: its user ghost (uid 3999999999) no longer exists on this host");
  // root is on every host, under that name.
  Result<std::string> root = system.Issue(kRoot, 3600, kNow);
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(system.Authenticate(*root, kNow + 1).ok());
}

TEST(TokenRegistry, ATokenWhoseUidNowBelongsToSomeoneElseIsRefused) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  Result<std::string> t = TokenRegistry(*st, KnownUsers()).Issue(kAlice, 3600, kNow);
  ASSERT_TRUE(t.ok());
  // alice was deleted and her uid given to mallory.
  TokenRegistry later(*st, KnownUsers({{1000, "mallory"}}));
  Result<Caller> c = later.Authenticate(*t, kNow + 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "token refused: uid 1000 now belongs to mallory, not to alice");
}

TEST(TokenRegistry, UsersRevokeTheirOwnTokenById) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st, KnownUsers());
  Result<std::string> first = tokens.Issue(kAlice, 3600, kNow);
  Result<std::string> second = tokens.Issue(kAlice, 3600, kNow);
  ASSERT_TRUE(first.ok() && second.ok());
  const std::string id = TokenRegistry::IdOf(*first);
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(id, TokenRegistry::KeyOf(*first).substr(0, 16));
  // Bob may not, and learns nothing about whose it is.
  Result<std::size_t> n = tokens.Revoke(kBob, false, {id, ""});
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(tokens.Authenticate(*first, kNow + 1).ok());
  n = tokens.Revoke(kAlice, false, {id, ""});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(tokens.Authenticate(*first, kNow + 1).status().message(), "invalid token");
  EXPECT_TRUE(tokens.Authenticate(*second, kNow + 1).ok());
  EXPECT_EQ(tokens.Revoke(kAlice, false, {id, ""}).status().code(), StatusCode::kNotFound);
}

TEST(TokenRegistry, OperatorsRevokeEveryTokenOfAUser) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st, KnownUsers());
  Result<std::string> a1 = tokens.Issue(kAlice, 3600, kNow);
  Result<std::string> a2 = tokens.Issue(kAlice, 3600, kNow);
  Result<std::string> b = tokens.Issue(kBob, 3600, kNow);
  ASSERT_TRUE(a1.ok() && a2.ok() && b.ok());
  EXPECT_EQ(tokens.Revoke(kBob, false, {"", "alice"}).status().code(),
            StatusCode::kPermissionDenied);
  Result<std::size_t> n = tokens.Revoke(kRoot, true, {"", "alice"});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 2u);
  EXPECT_FALSE(tokens.Authenticate(*a1, kNow + 1).ok());
  EXPECT_FALSE(tokens.Authenticate(*a2, kNow + 1).ok());
  EXPECT_TRUE(tokens.Authenticate(*b, kNow + 1).ok());
  // And an operator may revoke one token of anyone's by id.
  n = tokens.Revoke(kRoot, true, {TokenRegistry::IdOf(*b), ""});
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(tokens.Authenticate(*b, kNow + 1).ok());
}

TEST(TokenRegistry, RevocationRequestsAreChecked) {
  TempDir dir;
  auto st = OpenForTest(Options(dir));
  ASSERT_TRUE(st);
  TokenRegistry tokens(*st, KnownUsers());
  EXPECT_EQ(tokens.Revoke(kAlice, false, {"", ""}).status().message(),
            "token revoke: give a token id or a user, not both");
  EXPECT_EQ(tokens.Revoke(kAlice, false, {"0123456789abcdef", "alice"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Revoke(kAlice, false, {"xyz", ""}).status().message(),
            "token revoke: 'xyz' is not a token id (16 hex digits)");
}

}  // namespace
}  // namespace lockstep::controller
