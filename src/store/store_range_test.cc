// Store::ScanPage and Store::LastKey: pages in key order, bounds, the value filter.
#include <gtest/gtest.h>

#include "store/store.h"
#include "store/test_util.h"

namespace lockstep::store {
namespace {

std::vector<std::string> KeysOf(const Result<std::vector<Record>>& page) {
  EXPECT_TRUE(page.ok()) << page.status().ToString();
  std::vector<std::string> keys;
  if (page.ok())
    for (const Record& r : *page) keys.push_back(r.key);
  return keys;
}

class StoreRangeTest : public testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.path = dir_.File("lockstep.db");
    store_ = OpenForTest(options);
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_
                    ->Put({{"jobs", "a", R"({"user":"alice"})"},
                           {"jobs", "b", R"({"user":"bob"})"},
                           {"jobs", "c", R"({"user":"alice"})"},
                           {"jobs", "d", R"({"user":"carol"})"},
                           {"other", "0", R"({"user":"alice"})"},
                           {"other", "z", "x"}})
                    .ok());
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreRangeTest, PagesCoverTheTableOnceInKeyOrder) {
  std::vector<std::string> seen;
  KeyRange range{.limit = 3};
  for (;;) {
    std::vector<std::string> keys = KeysOf(store_->ScanPage("jobs", range));
    seen.insert(seen.end(), keys.begin(), keys.end());
    if (keys.size() < range.limit) break;
    range.from = keys.back() + '\x01';
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(StoreRangeTest, BoundsAreFromInclusiveAndToExclusive) {
  EXPECT_EQ(KeysOf(store_->ScanPage("jobs", {.from = "b", .to = "d"})),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(KeysOf(store_->ScanPage("jobs", {.from = "e"})).empty());
  EXPECT_TRUE(KeysOf(store_->ScanPage("none", {})).empty());
}

TEST_F(StoreRangeTest, ValueFilterKeepsOnlyRecordsContainingTheBytes) {
  EXPECT_EQ(KeysOf(store_->ScanPage("jobs", {.value_contains = R"("user":"alice")"})),
            (std::vector<std::string>{"a", "c"}));
  // The limit counts the records kept, not those the filter passed over.
  EXPECT_EQ(KeysOf(store_->ScanPage("jobs", {.limit = 1, .value_contains = "alice"})),
            (std::vector<std::string>{"a"}));
  EXPECT_TRUE(KeysOf(store_->ScanPage("jobs", {.value_contains = "dave"})).empty());
}

TEST_F(StoreRangeTest, LimitZeroIsRefused) {
  EXPECT_FALSE(store_->ScanPage("jobs", {.limit = 0}).ok());
}

TEST_F(StoreRangeTest, LastKeyIsTheTablesGreatestOrNothing) {
  Result<std::optional<std::string>> last = store_->LastKey("jobs");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->value_or("<none>"), "d");
  Result<std::optional<std::string>> none = store_->LastKey("none");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace lockstep::store
