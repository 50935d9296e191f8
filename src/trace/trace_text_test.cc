#include "trace/trace_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep::trace::internal {
namespace {

std::vector<std::pair<std::int64_t, std::string>> Lines(std::string_view text) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  LineReader r(text);
  while (r.Next()) out.emplace_back(r.number(), std::string(r.line()));
  return out;
}

TEST(LineReaderTest, NumbersLinesAndDropsCarriageReturns) {
  using L = std::vector<std::pair<std::int64_t, std::string>>;
  EXPECT_EQ(Lines(""), L{});
  EXPECT_EQ(Lines("a"), (L{{1, "a"}}));
  EXPECT_EQ(Lines("a\n"), (L{{1, "a"}}));
  EXPECT_EQ(Lines("a\r\nb\r\n"), (L{{1, "a"}, {2, "b"}}));
  EXPECT_EQ(Lines("a\n\n c"), (L{{1, "a"}, {2, ""}, {3, " c"}}));
  EXPECT_EQ(Lines("\n"), (L{{1, ""}}));
}

TEST(NumberTest, WholeTextOnly) {
  EXPECT_EQ(ToInt64("42"), 42);
  EXPECT_EQ(ToInt64("-1"), -1);
  EXPECT_EQ(ToInt64(""), std::nullopt);
  EXPECT_EQ(ToInt64("4x"), std::nullopt);
  EXPECT_EQ(ToInt64("+4"), std::nullopt);
  EXPECT_EQ(ToInt64("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ToDouble("552.21"), 552.21);
  EXPECT_EQ(ToDouble("-1"), -1.0);
  EXPECT_EQ(ToDouble("nan"), std::nullopt);
  EXPECT_EQ(ToDouble("inf"), std::nullopt);
  EXPECT_EQ(ToDouble("1.5.2"), std::nullopt);
}

TEST(CsvTableTest, ReadsRowsByColumnName) {
  CsvTable t("# comment\n\nb, a\n1,2\n\n# more\n3 ,4\n", "t.csv");
  ASSERT_TRUE(t.ReadHeader().ok());
  ASSERT_EQ(t.Column("a"), 1u);
  EXPECT_EQ(t.Column("c"), std::nullopt);
  Result<bool> more = t.NextRow();
  ASSERT_TRUE(more.ok() && *more);
  EXPECT_EQ(t.row(), 1);
  EXPECT_EQ(t.line(), 4);
  EXPECT_EQ(*t.Int(1), 2);
  more = t.NextRow();
  ASSERT_TRUE(more.ok() && *more);
  EXPECT_EQ(t.Field(0), "3");
  EXPECT_EQ(t.line(), 7);
  more = t.NextRow();
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

TEST(CsvTableTest, Errors) {
  CsvTable empty("\n# only a comment\n", "e.csv");
  EXPECT_EQ(empty.ReadHeader().message(), "e.csv: no header line (the file is empty)");

  CsvTable t("a,b\n1,2,3\n", "t.csv");
  ASSERT_TRUE(t.ReadHeader().ok());
  EXPECT_EQ(t.NextRow().status().message(), "t.csv:2: expected 2 fields, found 3");

  CsvTable q("a,b\n\"1\",2\n", "q.csv");
  ASSERT_TRUE(q.ReadHeader().ok());
  EXPECT_EQ(q.NextRow().status().message(), "q.csv:2: quoted CSV fields are not supported");

  CsvTable n("a,b\nx,\n", "n.csv");
  ASSERT_TRUE(n.ReadHeader().ok());
  ASSERT_TRUE(*n.NextRow());
  EXPECT_EQ(n.Int(0).status().message(), "n.csv:2: column 'a': 'x' is not an integer");
  EXPECT_EQ(n.Int(1).status().message(), "n.csv:2: column 'b': empty, expected an integer");
}

TEST(SortBySubmitTest, StableBySubmit) {
  std::vector<TraceJob> jobs(4);
  const std::int64_t submits[] = {5, 1, 5, 0};
  for (int i = 0; i < 4; ++i) {
    jobs[i].id = i + 1;
    jobs[i].submit = submits[i];
  }
  SortBySubmit(jobs);
  std::vector<std::int64_t> ids;
  for (const TraceJob& j : jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{4, 2, 1, 3}));
}

}  // namespace
}  // namespace lockstep::trace::internal
