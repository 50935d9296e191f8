// SlurmYaml: the layout of Slurm 22.05's --yaml (recorded from the peer's `squeue --yaml`), and
// correctness: its output parsed back with yaml-cpp (a test-only dependency) is the JSON it came
// from, for Slurm's recorded documents, lockstep's own, and strings chosen to break emitters.
#include "cli/format/slurm_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/format/slurm_json.h"

namespace lockstep::cli {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// A YAML node as JSON, by its explicit tag (every node SlurmYaml writes has one).
ordered_json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    ordered_json o = ordered_json::object();
    for (const auto& entry : n) o[entry.first.as<std::string>()] = ToJson(entry.second);
    return o;
  }
  if (n.IsSequence()) {
    ordered_json a = ordered_json::array();
    for (const auto& item : n) a.push_back(ToJson(item));
    return a;
  }
  const std::string tag = n.Tag();
  if (tag == "tag:yaml.org,2002:null") return nullptr;
  if (tag == "tag:yaml.org,2002:bool") return n.as<bool>();
  if (tag == "tag:yaml.org,2002:int") {
    return n.Scalar().front() == '-' ? ordered_json(n.as<long long>())
                                     : ordered_json(n.as<unsigned long long>());
  }
  if (tag == "tag:yaml.org,2002:float") return n.as<double>();
  EXPECT_EQ(tag, "tag:yaml.org,2002:str") << n.Scalar();
  return n.as<std::string>();
}

// Emits, parses back and compares (as unordered JSON: yaml-cpp keeps order, but the check is on
// the values); and the order of the top-level keys.
void ExpectRoundTrip(const ordered_json& doc) {
  const std::string text = SlurmYaml(doc);
  YAML::Node parsed;
  try {
    parsed = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    FAIL() << e.what() << "\n" << text;
  }
  const ordered_json back = ToJson(parsed);
  EXPECT_EQ(json(back), json(doc)) << text;
  if (doc.is_object() && back.is_object()) {
    std::vector<std::string> a, b;
    for (const auto& [k, v] : doc.items()) a.push_back(k);
    for (const auto& [k, v] : back.items()) b.push_back(k);
    EXPECT_EQ(a, b);
  }
}

TEST(SlurmYaml, LaidOutAsSlurmsLibyamlOutput) {
  const ordered_json doc = ordered_json::parse(R"({
    "meta": {"plugin": {"type": "openapi/v0.0.38"}, "Slurm": {"version": {"major": 22}}},
    "errors": [],
    "jobs": [{"account": null, "batch_flag": false, "billable_tres": 1.0, "flags": [],
              "show_flags": ["SHOW_ALL", "SHOW_DETAIL"], "name": "we:ird \"x\"",
              "job_resources": {"allocated_nodes": [{"nodename": "node001", "cpus_used": 0}]},
              "extra": {}}]
  })");
  EXPECT_EQ(SlurmYaml(doc),
            "%YAML 1.1\n"
            "--- !!map\n"
            "!!str meta: !!map\n"
            "  !!str plugin: !!map\n"
            "    !!str type: !!str openapi/v0.0.38\n"
            "  !!str Slurm: !!map\n"
            "    !!str version: !!map\n"
            "      !!str major: !!int 22\n"
            "!!str errors: !!seq []\n"
            "!!str jobs: !!seq\n"
            "- !!map\n"
            "  !!str account: !!null null\n"
            "  !!str batch_flag: !!bool false\n"
            "  !!str billable_tres: !!float 1.0\n"
            "  !!str flags: !!seq []\n"
            "  !!str show_flags: !!seq\n"
            "  - !!str SHOW_ALL\n"
            "  - !!str SHOW_DETAIL\n"
            "  !!str name: !!str \"we:ird \\\"x\\\"\"\n"
            "  !!str job_resources: !!map\n"
            "    !!str allocated_nodes: !!seq\n"
            "    - !!map\n"
            "      !!str nodename: !!str node001\n"
            "      !!str cpus_used: !!int 0\n"
            "  !!str extra: !!map {}\n"
            "...\n");
  ExpectRoundTrip(doc);
}

TEST(SlurmYaml, ScalarsArePlainOnlyWhenTheyReadBackAsThemselves) {
  using slurm_yaml::Scalar;
  EXPECT_EQ(Scalar("node[001-004]"), "\"node[001-004]\"");
  EXPECT_EQ(Scalar("gres:gpu:2"), "gres:gpu:2");
  EXPECT_EQ(Scalar("Slurm OpenAPI v0.0.38"), "Slurm OpenAPI v0.0.38");
  EXPECT_EQ(Scalar("/home/alice/run"), "/home/alice/run");
  EXPECT_EQ(Scalar("it's #1"), "\"it's #1\"");
  EXPECT_EQ(Scalar("a: b"), "\"a: b\"");
  EXPECT_EQ(Scalar(""), "\"\"");
  EXPECT_EQ(Scalar("two\nlines"), "\"two\\nlines\"");
  EXPECT_EQ(Scalar(std::string("nul\0", 4)), "\"nul\\x00\"");
}

TEST(SlurmYaml, StringsThatBreakEmittersComeBackAsWritten) {
  // clang-format off
  const std::vector<std::string> nasty = {
      "", " lead", "trail ", "two  spaces", "it's #1 - ok", "multi\nline: x", "we:ird \"x\"",
      "true", "false", "null", "~", "123", "0x1F", "1e3", ".5", "-", "- item", "? q", ":", "a:",
      "a: b", "a #b", "#c", "...", "---", "--- x", "@at", "`tick", "%pct", "!tag", "&anchor",
      "*alias", "|", ">", "[a]", "{b: c}", "a, b", "back\\slash", "tab\there", "cr\rlf\n",
      std::string("ctl\x01\x1b\x7f", 6), "é ü 日本", "nel\xc2\x85x", "c1\xc2\x9bx",
      "ls\xe2\x80\xa8ps\xe2\x80\xa9", "\xef\xbb\xbf" "bom", "=", "<<", "y", "NO", "on",
      std::string(5000, 'x') + " " + std::string(3000, 'y')};
  // clang-format on
  ordered_json values = ordered_json::object(), keys = ordered_json::object();
  ordered_json list = ordered_json::array();
  for (std::size_t i = 0; i < nasty.size(); ++i) {
    values["k" + std::to_string(i)] = nasty[i];
    keys[nasty[i]] = static_cast<int>(i);
    list.push_back(nasty[i]);
  }
  ExpectRoundTrip(values);
  ExpectRoundTrip(keys);  // the 8001-character one as an explicit "? key"
  ExpectRoundTrip({{"list", list}});
}

TEST(SlurmYaml, NumbersBooleansNullsAndNestedCollections) {
  ExpectRoundTrip(ordered_json::parse(R"({
    "ints": [0, -1, 9223372036854775807, -9223372036854775808, 18446744073709551615],
    "floats": [1.0, 0.1, -2.5, 1e-9, 1.7976931348623157e308, 123456789.125],
    "flags": [true, false], "nothing": null,
    "nested": [[], [[1, 2], {}], [{"a": [{"b": []}]}], {"x": {"y": {"z": [null]}}}]
  })"));
  // NaN and infinities, which JSON cannot hold, are null as in --json's dump.
  EXPECT_EQ(SlurmYaml({{"x", std::nan("")}}), "%YAML 1.1\n--- !!map\n!!str x: !!null null\n...\n");
}

ordered_json ReadData(const std::string& name) {
  const char* src = std::getenv("LOCKSTEP_SOURCE_DIR");
  std::ifstream in(std::string(src ? src : ".") + "/tests/data/slurm_json/" + name);
  EXPECT_TRUE(in) << name;
  return in ? ordered_json::parse(in) : ordered_json();
}

// Slurm 22.05.8's own documents (recorded from the peer's --json), and lockstep's squeue --json.
TEST(SlurmYaml, SlurmsAndLockstepsDocumentsComeBackAsTheirJson) {
  for (const char* name :
       {"sinfo.json", "squeue_finished.json", "squeue_running_pending_array.json"}) {
    SCOPED_TRACE(name);
    ExpectRoundTrip(ReadData(name));
  }
  const json jobs = json::parse(R"([{"job_id": 7, "name": "train: big #1", "user": "alice",
      "state": "PENDING", "partition": "gpu", "nodes": "", "node_count": 2, "cpus": 16}])");
  SlurmJsonContext ctx;
  ctx.now = 1764403200;
  Result<ordered_json> doc = SqueueJson(jobs, ctx);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ExpectRoundTrip(*doc);
}

}  // namespace
}  // namespace lockstep::cli
