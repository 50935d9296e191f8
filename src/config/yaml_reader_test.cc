#include "config/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lockstep::config {
namespace {

using ::testing::StartsWith;

TEST(YamlReaderTest, TypedGettersAndDefaults) {
  YamlReader r("t.yaml");
  YAML::Node doc = r.Load(R"(n: 42
big: unlimited
minus: -1
flag: Yes
wall: 1-12
grace: 90
grace_time: 1:30
mem: 16G
hosts: ["a[1-2]", b1]
one: x
list: [x, y]
tres: {cpu: 8, mem: 1G, gres/gpu: 4}
)");
  ASSERT_FALSE(r.failed()) << r.status().ToString();
  MapView m(r, doc, "");
  EXPECT_EQ(m.Int("n", 0, 0, 100), 42);
  EXPECT_EQ(m.Int("absent", 7, 0, 100), 7);
  EXPECT_EQ(m.Int("big", 0, 0, 100, true), kUnlimited);
  EXPECT_EQ(m.Int("minus", 0, 0, 100, true), kUnlimited);
  EXPECT_TRUE(m.Bool("flag", false));
  EXPECT_EQ(m.Duration("wall", 0), 36 * 3600);
  EXPECT_EQ(m.DurationSeconds("grace", 0), 90);  // seconds, unlike a Slurm time's minutes
  EXPECT_EQ(m.DurationSeconds("grace_time", 0), 90);
  EXPECT_EQ(m.MemoryMb("mem", 0), 16 * 1024);
  EXPECT_EQ(m.Hostlist("hosts"), (std::vector<std::string>{"a1", "a2", "b1"}));
  EXPECT_EQ(m.StringList("one"), std::vector<std::string>{"x"});
  EXPECT_EQ(m.StringList("list"), (std::vector<std::string>{"x", "y"}));
  engine::TresLimit t = m.Tres("tres");
  EXPECT_EQ(t.cpus, 8);
  EXPECT_EQ(t.mem_mb, 1024);
  EXPECT_EQ(t.gpus, 4);
  EXPECT_EQ(t.nodes, kUnlimited);
  m.Finish();
  EXPECT_FALSE(r.failed()) << r.status().ToString();
}

TEST(YamlReaderTest, KeepsTheFirstError) {
  YamlReader r("t.yaml");
  YAML::Node doc = r.Load("a: x\nb: y\n");
  MapView m(r, doc, "top");
  EXPECT_EQ(m.Int("a", 3, 0, 9), 3);
  EXPECT_EQ(m.Int("b", 4, 0, 9), 4);
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.status().message(), "t.yaml:1: top.a: 'x' is not an integer");
}

TEST(YamlReaderTest, UnknownAndDuplicateKeys) {
  {
    YamlReader r("t.yaml");
    MapView m(r, r.Load("a: 1\nb: 2\n"), "");
    m.Int("a", 0, 0, 9);
    m.Finish();
    EXPECT_EQ(r.status().message(), "t.yaml:2: b: unknown key (known here: a)");
  }
  {
    YamlReader r("t.yaml");
    MapView m(r, r.Load("a: 1\na: 2\n"), "x");
    EXPECT_EQ(r.status().message(), "t.yaml:2: x.a: duplicate key");
  }
}

TEST(YamlReaderTest, SyntaxErrorHasALine) {
  YamlReader r("t.yaml");
  r.Load("a: 1\nb: [2\n");
  ASSERT_TRUE(r.failed());
  EXPECT_THAT(r.status().message(), StartsWith("t.yaml:"));
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("YAML syntax error"));
}

TEST(YamlReaderTest, ForEachChecksForAList) {
  YamlReader r("t.yaml");
  YAML::Node doc = r.Load("items: {a: 1}\n");
  int calls = 0;
  r.ForEach(doc["items"], "items", [&](const YAML::Node&, const std::string&) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(r.status().message(), "t.yaml:1: items: expected a list");
}

}  // namespace
}  // namespace lockstep::config
