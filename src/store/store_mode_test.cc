// The store's modes for network file systems (store_mode.h) and its write fence.
#include "store/store_mode.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/clock.h"
#include "common/write_fence.h"
#include "store/store.h"
#include "store/test_util.h"

namespace lockstep::store {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ChooseStoreModeTest, AutoIsExclusiveOnANetworkFilesystemAndWalElsewhere) {
  const FilesystemKind nfs{"nfs", true}, local{"local", false};
  EXPECT_EQ(*ChooseStoreMode("auto", nfs, "--store-mode"), StoreMode::kExclusive);
  EXPECT_EQ(*ChooseStoreMode("auto", local, "--store-mode"), StoreMode::kWal);
  EXPECT_EQ(*ChooseStoreMode("truncate", nfs, "--store-mode"), StoreMode::kTruncate);
  EXPECT_EQ(*ChooseStoreMode("exclusive", local, "--store-mode"), StoreMode::kExclusive);
}

TEST(ChooseStoreModeTest, RefusesWalOnANetworkFilesystemAndUnknownModesNamingTheSetting) {
  Result<StoreMode> wal = ChooseStoreMode("wal", {"cephfs", true}, "store_mode");
  ASSERT_FALSE(wal.ok());
  EXPECT_EQ(wal.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wal.status().message().find("store_mode: wal"), std::string::npos);
  EXPECT_NE(wal.status().message().find("cephfs"), std::string::npos);
  Result<StoreMode> bad = ChooseStoreMode("memory", {"local", false}, "--store-mode");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--store-mode: 'memory' is not a store mode"),
            std::string::npos);
}

TEST(DetectFilesystemTest, TheTestDirectoryIsLocalAndAMissingOneIsAnError) {
  TempDir dir;
  Result<FilesystemKind> fs = DetectFilesystem(std::filesystem::path(dir.File("x")).parent_path());
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  EXPECT_FALSE(fs->network) << fs->name;
  EXPECT_FALSE(DetectFilesystem(dir.File("missing/dir")).ok());
}

class StoreModeTest : public testing::TestWithParam<StoreMode> {
 protected:
  StoreOptions Options() const {
    StoreOptions o;
    o.path = dir_.File("lockstep.db");
    o.mode = GetParam();
    o.busy_timeout = std::chrono::milliseconds(50);
    return o;
  }
  bool Exists(const std::string& suffix) const {
    return std::filesystem::exists(dir_.File("lockstep.db") + suffix);
  }
  TempDir dir_;
};

TEST_P(StoreModeTest, WritesReadsAndReopensWithTheFilesTheModePromises) {
  {
    auto store = OpenForTest(Options());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put({{"jobs", "1", "a"}, {"jobs", "2", "b"}}).ok());
    Result<std::uint64_t> id = store->AllocateIds("job_id", 3);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, 1u);
    Result<std::optional<std::string>> got = store->Get("jobs", "2");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->value_or(""), "b");
    // No shared-memory index outside WAL's own mode; no WAL file in truncate mode.
    EXPECT_EQ(Exists("-shm"), GetParam() == StoreMode::kWal);
    if (GetParam() == StoreMode::kTruncate) EXPECT_FALSE(Exists("-wal"));
  }
  auto again = OpenForTest(Options());
  ASSERT_NE(again, nullptr);
  Result<std::vector<Record>> jobs = again->Scan("jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ(jobs->size(), 2u);
  EXPECT_EQ(*again->AllocateIds("job_id", 1), 4u);
}

TEST_P(StoreModeTest, ExclusiveLockingKeepsASecondOpenerOut) {
  if (GetParam() == StoreMode::kWal) GTEST_SKIP() << "WAL shares the file by design";
  auto first = OpenForTest(Options());
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->Put({{"jobs", "1", "a"}}).ok());
  Result<std::unique_ptr<Store>> second = Store::Open(Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable) << second.status().ToString();
}

TEST_P(StoreModeTest, AFileMovesBetweenModes) {
  StoreOptions o = Options();
  o.mode = GetParam() == StoreMode::kWal ? StoreMode::kTruncate : StoreMode::kWal;
  {
    auto store = OpenForTest(o);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put({{"jobs", "1", "from the other mode"}}).ok());
  }
  auto store = OpenForTest(Options());
  ASSERT_NE(store, nullptr);
  Result<std::optional<std::string>> got = store->Get("jobs", "1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->value_or(""), "from the other mode");
}

TEST_P(StoreModeTest, AClosedFenceRefusesEveryWriteAndLeavesTheFileAsItWas) {
  ManualClock clock;
  WriteFence fence(&clock);
  fence.Extend(clock.MonotonicNow() + std::chrono::seconds(10));
  StoreOptions o = Options();
  o.fence = &fence;
  auto store = OpenForTest(o);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put({{"jobs", "1", "before"}}).ok());
  const std::string db = Slurp(o.path), wal = Slurp(o.path + "-wal");

  clock.Advance(std::chrono::seconds(10));  // the deadline: not renewed in time
  Status refused = store->Put({{"jobs", "2", "after"}});
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.ToString();
  EXPECT_NE(refused.message().find("write fence is closed"), std::string::npos);
  EXPECT_FALSE(store->AllocateIds("job_id", 1).ok());
  // A renewal that comes too late opens nothing: the store stays refused (crash-only).
  fence.Extend(clock.MonotonicNow() + std::chrono::seconds(10));
  EXPECT_FALSE(store->Put({{"jobs", "3", "later"}}).ok());
  EXPECT_EQ(Slurp(o.path), db);
  EXPECT_EQ(Slurp(o.path + "-wal"), wal);
  Result<std::optional<std::string>> got = store->Get("jobs", "2");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

TEST(WriteFenceTest, OpensOnExtendNeverMovesBackAndStaysShutOnceClosed) {
  ManualClock clock;
  WriteFence fence(&clock);
  EXPECT_FALSE(fence.IsOpen());
  fence.Extend(clock.MonotonicNow() + std::chrono::seconds(2));
  EXPECT_TRUE(fence.IsOpen());
  fence.Extend(clock.MonotonicNow() + std::chrono::seconds(1));  // a late answer
  clock.Advance(std::chrono::milliseconds(1500));
  EXPECT_TRUE(fence.IsOpen());
  clock.Advance(std::chrono::milliseconds(500));
  EXPECT_FALSE(fence.IsOpen());
  fence.Extend(clock.MonotonicNow() + std::chrono::seconds(2));
  fence.Close();
  EXPECT_FALSE(fence.IsOpen());
}

INSTANTIATE_TEST_SUITE_P(Modes, StoreModeTest,
                         testing::Values(StoreMode::kWal, StoreMode::kExclusive,
                                         StoreMode::kTruncate),
                         [](const testing::TestParamInfo<StoreMode>& info) {
                           return std::string(StoreModeName(info.param));
                         });

}  // namespace
}  // namespace lockstep::store
