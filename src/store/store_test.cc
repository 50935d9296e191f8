#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "store/test_util.h"

namespace lockstep::store {
namespace {

class StoreTest : public testing::Test {
 protected:
  StoreOptions Options() const {
    StoreOptions options;
    options.path = dir_.File("lockstep.db");
    return options;
  }
  std::unique_ptr<Store> Open() { return OpenForTest(Options()); }

  TempDir dir_;
};

std::string ValueOf(const Store& store, const std::string& table, const std::string& key) {
  Result<std::optional<std::string>> value = store.Get(table, key);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() && value->has_value() ? **value : "<absent>";
}

TEST_F(StoreTest, PutThenGetAndScanInKeyOrder) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store
                  ->Put({{"jobs", "2", R"({"id":2})"},
                         {"jobs", "10", R"({"id":10})"},
                         {"nodes", "n1", "up"},
                         {"jobs", "1", R"({"id":1})"}})
                  .ok());
  EXPECT_EQ(ValueOf(*store, "jobs", "2"), R"({"id":2})");
  EXPECT_EQ(ValueOf(*store, "nodes", "n1"), "up");
  EXPECT_EQ(ValueOf(*store, "jobs", "3"), "<absent>");
  EXPECT_EQ(ValueOf(*store, "nodes", "2"), "<absent>");  // tables are separate

  Result<std::vector<Record>> jobs = store->Scan("jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<std::string> keys;
  for (const Record& r : *jobs) {
    EXPECT_EQ(r.table, "jobs");
    keys.push_back(r.key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"1", "10", "2"}));  // byte-wise order
  Result<std::vector<Record>> none = store->Scan("no-such-table");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST_F(StoreTest, PutReplacesAndLaterRecordOfOneCallWins) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put({{"jobs", "1", "old"}}).ok());
  ASSERT_TRUE(store->Put({{"jobs", "1", "first"}, {"jobs", "1", "second"}}).ok());
  EXPECT_EQ(ValueOf(*store, "jobs", "1"), "second");
}

TEST_F(StoreTest, EmptyKeyEmptyValueAndBinaryValueRoundTrip) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(store->Put({{"t", "", "empty key"}, {"t", "e", ""}, {"t", "b", binary}}).ok());
  EXPECT_EQ(ValueOf(*store, "t", ""), "empty key");
  EXPECT_EQ(ValueOf(*store, "t", "e"), "");  // present and empty, not absent
  EXPECT_EQ(ValueOf(*store, "t", "b"), binary);
}

TEST_F(StoreTest, DeleteRemovesKeysAndIgnoresMissingOnes) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put({{"jobs", "1", "a"}, {"jobs", "2", "b"}, {"jobs", "3", "c"}}).ok());
  ASSERT_TRUE(store->Delete("jobs", {"1", "3", "99"}).ok());
  Result<std::vector<Record>> jobs = store->Scan("jobs");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].key, "2");
  EXPECT_TRUE(store->Delete("jobs", {}).ok());
  EXPECT_TRUE(store->Put({}).ok());
}

TEST_F(StoreTest, BadNamesAreRefusedAndNothingIsWritten) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Status empty_table = store->Put({{"jobs", "1", "a"}, {"", "2", "b"}});
  EXPECT_EQ(empty_table.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty_table.message().find("record 1"), std::string::npos) << empty_table.message();
  EXPECT_EQ(store->Put({{"jobs", std::string("a\0b", 3), "v"}}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Delete("", {"1"}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->AllocateIds("", 1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->AllocateIds("job", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ValueOf(*store, "jobs", "1"), "<absent>");
  EXPECT_EQ(store->stats().commits, 0u);
}

TEST_F(StoreTest, AllocateIdsStartsAtOneAndIsConsecutivePerCounter) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<std::uint64_t> a = store->AllocateIds("job", 1);
  Result<std::uint64_t> b = store->AllocateIds("job", 10);
  Result<std::uint64_t> c = store->AllocateIds("job", 1);
  Result<std::uint64_t> other = store->AllocateIds("step", 5);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && other.ok());
  EXPECT_EQ(*a, 1u);
  EXPECT_EQ(*b, 2u);
  EXPECT_EQ(*c, 12u);
  EXPECT_EQ(*other, 1u);
}

TEST_F(StoreTest, AllocateIdsRefusesToOverflowAndLeavesTheCounter) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::uint64_t max = std::numeric_limits<std::int64_t>::max();
  ASSERT_TRUE(store->AllocateIds("big", max - 10).ok());  // next is now max - 9
  Result<std::uint64_t> too_many = store->AllocateIds("big", 100);
  EXPECT_EQ(too_many.status().code(), StatusCode::kFailedPrecondition);
  Result<std::uint64_t> fits = store->AllocateIds("big", 9);
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(*fits, max - 9);
  EXPECT_TRUE(store->Put({{"still", "writable", "yes"}}).ok());  // not a store-wide failure
}

TEST_F(StoreTest, IdsAreUniqueAndConsecutiveAcrossThreads) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 8;
  constexpr int kCalls = 100;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> ranges(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::uint64_t count = 1 + (t + i) % 3;
        Result<std::uint64_t> first = store->AllocateIds("job", count);
        ASSERT_TRUE(first.ok()) << first.status().ToString();
        ranges[t].emplace_back(*first, count);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> all;
  for (const auto& r : ranges) all.insert(all.end(), r.begin(), r.end());
  std::sort(all.begin(), all.end());
  std::uint64_t next = 1;  // the ranges must tile [1, total] with no gap or overlap
  for (const auto& [first, count] : all) {
    ASSERT_EQ(first, next);
    next += count;
  }
  EXPECT_EQ(*store->AllocateIds("job", 1), next);
}

TEST_F(StoreTest, ConcurrentPutsAreDurableVisibleAndShareCommits) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 16;
  constexpr int kPuts = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPuts; ++i) {
        const std::string key = std::to_string(t) + "/" + std::to_string(i);
        ASSERT_TRUE(store->Put({{"jobs", key, "v" + key}}).ok());
        if (i % 100 == 0) {
          ASSERT_EQ(ValueOf(*store, "jobs", key), "v" + key);  // a caller reads its own write
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Result<std::vector<Record>> jobs = store->Scan("jobs");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), static_cast<std::size_t>(kThreads * kPuts));
  for (const Record& r : *jobs) EXPECT_EQ(r.value, "v" + r.key);
  const Store::Stats stats = store->stats();
  EXPECT_EQ(stats.records, static_cast<std::uint64_t>(kThreads * kPuts));
  EXPECT_LT(stats.commits, stats.records) << "concurrent puts should share transactions";
}

TEST_F(StoreTest, CallLargerThanMaxBatchCommitsWholeAndAlone) {
  StoreOptions options = Options();
  options.max_batch = 8;
  auto store = OpenForTest(options);
  ASSERT_NE(store, nullptr);
  std::vector<Record> records;
  for (int i = 0; i < 100; ++i) records.push_back({"jobs", std::to_string(i), "v"});
  ASSERT_TRUE(store->Put(records).ok());
  EXPECT_EQ(store->Scan("jobs")->size(), 100u);
  EXPECT_EQ(store->stats().commits, 1u);
}

TEST_F(StoreTest, ReopenSeesEverythingWrittenBeforeClose) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put({{"jobs", "1", "a"}, {"jobs", "2", "b"}}).ok());
    ASSERT_TRUE(store->Delete("jobs", {"1"}).ok());
    ASSERT_TRUE(store->AllocateIds("job", 41).ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(ValueOf(*store, "jobs", "1"), "<absent>");
  EXPECT_EQ(ValueOf(*store, "jobs", "2"), "b");
  EXPECT_EQ(*store->AllocateIds("job", 1), 42u);
}

// Sets a PRAGMA on the file with a plain SQLite connection.
void SetPragma(const std::string& path, const std::string& pragma) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, ("PRAGMA " + pragma).c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(StoreTest, RefusesAStoreFromANewerVersion) {
  { ASSERT_NE(Open(), nullptr); }
  SetPragma(Options().path, "user_version = " + std::to_string(kSchemaVersion + 1));
  Result<std::unique_ptr<Store>> store = Store::Open(Options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = store.status().message();
  EXPECT_NE(message.find(Options().path), std::string::npos) << message;
  EXPECT_NE(message.find("version 2 is newer"), std::string::npos) << message;
}

TEST_F(StoreTest, RefusesAGarbageFileNamingItAndLeavesItAlone) {
  const std::string path = dir_.File("garbage.db");
  std::string garbage;
  for (int i = 0; i < 5000; ++i) garbage.push_back(static_cast<char>((i * 7919) % 251));
  std::ofstream(path, std::ios::binary) << garbage;
  StoreOptions options = Options();
  options.path = path;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.status().message(),
            path +
                ": not a lockstep store (not a SQLite file, or a damaged one): file is not "
                "a database");
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage);
}

TEST_F(StoreTest, RefusesAnotherApplicationsSqliteFile) {
  SetPragma(Options().path, "user_version = 7");
  Result<std::unique_ptr<Store>> store = Store::Open(Options());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("a SQLite database but not a lockstep store"),
            std::string::npos)
      << store.status().message();
}

TEST_F(StoreTest, MissingDirectoryIsNamed) {
  StoreOptions options = Options();
  options.path = dir_.File("no/such/dir/lockstep.db");
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound);
  EXPECT_NE(store.status().message().find(options.path), std::string::npos);
}

TEST_F(StoreTest, FileIsReadableWithPlainSqlite) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put({{"jobs", "7", R"({"id":7})"}}).ok());
    ASSERT_TRUE(store->AllocateIds("job", 3).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(Options().path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::vector<std::string> rows;
  auto collect = [](void* out, int n, char** values, char**) {
    std::string row;
    for (int i = 0; i < n; ++i) row += std::string(i ? "|" : "") + (values[i] ? values[i] : "");
    static_cast<std::vector<std::string>*>(out)->push_back(row);
    return 0;
  };
  const char* sql =
      "PRAGMA user_version; PRAGMA application_id; PRAGMA journal_mode;"
      "SELECT tbl, key, CAST(value AS TEXT), typeof(value) FROM records;"
      "SELECT name, next FROM counters;";
  ASSERT_EQ(sqlite3_exec(db, sql, collect, &rows, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  EXPECT_EQ(rows, (std::vector<std::string>{"1", std::to_string(kApplicationId), "wal",
                                            R"(jobs|7|{"id":7}|blob)", "job|4"}));
}

}  // namespace
}  // namespace lockstep::store
