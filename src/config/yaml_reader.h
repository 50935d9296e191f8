// Typed, strict reading of YAML documents that people write: every value is checked, every error
// names the file, the line and the key ("cluster.yaml:12: partitions[0].max_time: ..."), and keys
// that nobody asked for are errors, so that a typo never passes silently.
//
// The reader keeps the first error (later ones are usually its consequences) and returns
// defaults after it, so parsing code reads straight through and checks failed() where it must
// not go on. Not thread-safe; a YamlReader and its MapViews live on one parse's stack.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "engine/model.h"

namespace lockstep::config {

class YamlReader {
 public:
  explicit YamlReader(std::string_view source_name) : source_(source_name) {}

  // Parses `text` into a document; a syntax error is recorded (and an undefined node returned).
  YAML::Node Load(std::string_view text);

  // Records an error at `mark` (yaml-cpp's 0-based line; null: no line) for the key `path`.
  // Only the first error is kept.
  void Fail(const YAML::Mark& mark, std::string_view path, std::string_view message);
  bool failed() const { return !status_.ok(); }
  const Status& status() const { return status_; }
  const std::string& source() const { return source_; }

  // The text of a scalar; records an error and returns nullopt for a map or a list.
  std::optional<std::string> Scalar(const YAML::Node& node, std::string_view path);

  // Calls fn(item, "path[i]") for each item of a list. Null/absent: no items. Anything but a
  // list is an error.
  template <typename Fn>
  void ForEach(const YAML::Node& node, std::string_view path, Fn&& fn) {
    if (!node.IsDefined() || node.IsNull()) return;
    if (!node.IsSequence()) {
      Fail(node.Mark(), path, "expected a list");
      return;
    }
    for (std::size_t i = 0; i < node.size() && !failed(); ++i) {
      fn(node[i], std::string(path) + "[" + std::to_string(i) + "]");
    }
  }

 private:
  std::string source_;
  Status status_;
};

// One YAML map of a document, read by key. A null or absent node reads as an empty map.
// Getters mark their key as used and return `def` when the key is absent or null; Finish()
// reports the keys that no getter asked for, and duplicate keys.
class MapView {
 public:
  MapView(YamlReader& reader, const YAML::Node& node, std::string path);

  const std::string& path() const { return path_; }
  // "path.key", or "key" at the top level.
  std::string KeyPath(std::string_view key) const;
  // Where `key` is (its line), else where the map is.
  YAML::Mark MarkOf(std::string_view key) const;
  YAML::Mark mark() const { return mark_; }
  YamlReader& reader() { return reader_; }

  // Present and not null.
  bool Has(std::string_view key) const;
  // The raw value (undefined when absent); marks the key used.
  YAML::Node Value(std::string_view key);
  // Records an error about `key`'s value.
  void Fail(std::string_view key, std::string_view message);

  std::optional<std::string> String(std::string_view key);
  std::string String(std::string_view key, std::string def);
  std::string RequiredString(std::string_view key);
  // An integer in [min, max]; with `allow_unlimited`, "UNLIMITED", "infinite" and -1 give
  // kUnlimited.
  std::int64_t Int(std::string_view key, std::int64_t def, std::int64_t min, std::int64_t max,
                   bool allow_unlimited = false);
  bool Bool(std::string_view key, bool def);
  // A Slurm time: "30" (minutes), "30:00", "1:00:00", "2-00:00:00", "7-0", "UNLIMITED".
  Seconds Duration(std::string_view key, Seconds def);
  // A plain number of seconds (Slurm's GraceTime), or a Slurm time as above.
  Seconds DurationSeconds(std::string_view key, Seconds def);
  // A Slurm memory size in MB: "4096", "512G", "1T".
  std::int64_t MemoryMb(std::string_view key, std::int64_t def);
  // Names as one hostlist ("gpu[001-064],cpu01") or a list of hostlists. Absent or "": empty.
  std::vector<std::string> Hostlist(std::string_view key);
  // A list of plain strings (a single string is a list of one). Absent: empty.
  std::vector<std::string> StringList(std::string_view key);
  // A TRES map {cpu, mem, gpu, node} ("gres/gpu" is accepted for gpu); absent keys unlimited.
  engine::TresLimit Tres(std::string_view key);
  engine::PreemptMode PreemptMode(std::string_view key, engine::PreemptMode def);

  // One of the named choices, compared without case.
  template <typename E>
  E Enum(std::string_view key, std::initializer_list<std::pair<std::string_view, E>> choices,
         E def) {
    std::optional<std::string> s = String(key);
    if (!s) return def;
    for (const auto& [name, value] : choices) {
      if (EqualsIgnoreCase(*s, name)) return value;
    }
    std::string expected;
    for (const auto& c : choices) expected += (expected.empty() ? "" : "|") + std::string(c.first);
    Fail(key, "'" + *s + "' is not one of " + expected);
    return def;
  }

  // Reports unknown and duplicate keys. Call once all getters have run.
  void Finish();

  static bool EqualsIgnoreCase(std::string_view a, std::string_view b);

 private:
  struct Entry {
    std::string key;
    YAML::Node value;
    YAML::Mark key_mark;
    bool used = false;
  };
  const Entry* Find(std::string_view key) const;

  YamlReader& reader_;
  std::string path_;
  YAML::Mark mark_;
  std::vector<Entry> entries_;
  std::vector<std::string> asked_;  // every key a getter asked for, for the unknown-key message
};

}  // namespace lockstep::config
