#include "config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <exception>

#include "common/duration.h"
#include "common/hostlist.h"

namespace lockstep::config {

// ---------------------------------------------------------------------------------------------
// YamlReader

YAML::Node YamlReader::Load(std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    Fail(e.mark, "", "YAML syntax error: " + e.msg);
  } catch (const std::exception& e) {
    Fail(YAML::Mark::null_mark(), "", std::string("YAML error: ") + e.what());
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

void YamlReader::Fail(const YAML::Mark& mark, std::string_view path, std::string_view message) {
  if (failed()) return;
  std::string m = source_;
  if (!mark.is_null()) m += ":" + std::to_string(mark.line + 1);
  m += ": ";
  if (!path.empty()) m += std::string(path) + ": ";
  m += message;
  status_ = InvalidArgument(std::move(m));
}

std::optional<std::string> YamlReader::Scalar(const YAML::Node& node, std::string_view path) {
  if (!node.IsScalar()) {
    Fail(node.Mark(), path,
         node.IsSequence() ? "expected a single value, found a list"
                           : "expected a single value, found a map");
    return std::nullopt;
  }
  return node.Scalar();
}

// ---------------------------------------------------------------------------------------------
// MapView

MapView::MapView(YamlReader& reader, const YAML::Node& node, std::string path)
    : reader_(reader),
      path_(std::move(path)),
      mark_(node.IsDefined() ? node.Mark() : YAML::Mark::null_mark()) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    reader_.Fail(mark_, path_,
                 node.IsSequence() ? "expected a map (key: value), found a list"
                                   : "expected a map (key: value), found '" + node.Scalar() + "'");
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      reader_.Fail(it->first.Mark(), path_, "keys must be plain names");
      return;
    }
    std::string key = it->first.Scalar();
    if (Find(key) != nullptr) {
      reader_.Fail(it->first.Mark(), KeyPath(key), "duplicate key");
      return;
    }
    entries_.push_back(Entry{key, it->second, it->first.Mark(), false});
  }
}

const MapView::Entry* MapView::Find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

std::string MapView::KeyPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

YAML::Mark MapView::MarkOf(std::string_view key) const {
  const Entry* e = Find(key);
  return e == nullptr ? mark_ : e->key_mark;
}

bool MapView::Has(std::string_view key) const {
  const Entry* e = Find(key);
  return e != nullptr && !e->value.IsNull();
}

YAML::Node MapView::Value(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.emplace_back(key);
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.used = true;
      return e.value;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

void MapView::Fail(std::string_view key, std::string_view message) {
  reader_.Fail(MarkOf(key), KeyPath(key), message);
}

std::optional<std::string> MapView::String(std::string_view key) {
  YAML::Node v = Value(key);
  if (!v.IsDefined() || v.IsNull() || reader_.failed()) return std::nullopt;
  return reader_.Scalar(v, KeyPath(key));
}

std::string MapView::String(std::string_view key, std::string def) {
  std::optional<std::string> s = String(key);
  return s ? *s : def;
}

std::string MapView::RequiredString(std::string_view key) {
  std::optional<std::string> s = String(key);
  if (!s && !reader_.failed()) {
    reader_.Fail(mark_, KeyPath(key), "required");
  } else if (s && s->empty()) {
    Fail(key, "must not be empty");
  }
  return s ? *s : "";
}

bool MapView::EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

namespace {

bool IsUnlimited(std::string_view s) {
  return MapView::EqualsIgnoreCase(s, "unlimited") || MapView::EqualsIgnoreCase(s, "infinite");
}

std::optional<std::int64_t> ParseInt(std::string_view s) {
  std::int64_t v = 0;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::int64_t MapView::Int(std::string_view key, std::int64_t def, std::int64_t min,
                          std::int64_t max, bool allow_unlimited) {
  std::optional<std::string> s = String(key);
  if (!s) return def;
  if (allow_unlimited && (IsUnlimited(*s) || *s == "-1")) return kUnlimited;
  std::optional<std::int64_t> v = ParseInt(*s);
  if (!v) {
    Fail(key, "'" + *s + "' is not an integer" + (allow_unlimited ? " or UNLIMITED" : ""));
    return def;
  }
  if (*v < min || *v > max) {
    Fail(key, std::to_string(*v) + " is out of range [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
    return def;
  }
  return *v;
}

bool MapView::Bool(std::string_view key, bool def) {
  std::optional<std::string> s = String(key);
  if (!s) return def;
  for (std::string_view t : {"true", "yes", "on"}) {
    if (EqualsIgnoreCase(*s, t)) return true;
  }
  for (std::string_view f : {"false", "no", "off"}) {
    if (EqualsIgnoreCase(*s, f)) return false;
  }
  Fail(key, "'" + *s + "' is not true or false");
  return def;
}

Seconds MapView::Duration(std::string_view key, Seconds def) {
  std::optional<std::string> s = String(key);
  if (!s) return def;
  if (IsUnlimited(*s)) return kUnlimited;
  Result<Seconds> d = ParseSlurmDuration(*s);
  if (!d.ok()) {
    Fail(key, "'" + *s +
                  "' is not a Slurm duration (minutes, [days-]hours:minutes:seconds, "
                  "days-hours or UNLIMITED)");
    return def;
  }
  return *d;
}

Seconds MapView::DurationSeconds(std::string_view key, Seconds def) {
  if (!Has(key)) return Duration(key, def);  // marks it used
  std::optional<std::string> s = String(key);
  if (!s) return def;
  if (std::optional<std::int64_t> v = ParseInt(*s)) {
    if (*v < 0) {
      Fail(key, "must not be negative");
      return def;
    }
    return *v;
  }
  return Duration(key, def);
}

std::int64_t MapView::MemoryMb(std::string_view key, std::int64_t def) {
  std::optional<std::string> s = String(key);
  if (!s) return def;
  Result<std::int64_t> mb = ParseMemoryMb(*s);
  if (!mb.ok()) {
    Fail(key, "'" + *s + "' is not a memory size (megabytes, or a number with K, M, G or T)");
    return def;
  }
  return *mb;
}

std::vector<std::string> MapView::Hostlist(std::string_view key) {
  std::vector<std::string> names;
  YAML::Node v = Value(key);
  if (!v.IsDefined() || v.IsNull() || reader_.failed()) return names;
  auto expand = [&](const YAML::Node& n, const std::string& path) {
    std::optional<std::string> s = reader_.Scalar(n, path);
    if (!s || s->empty()) return;
    Result<std::vector<std::string>> r = ExpandHostlist(*s);
    if (!r.ok()) {
      reader_.Fail(n.Mark(), path, "'" + *s + "' is not a hostlist: " + r.status().message());
      return;
    }
    names.insert(names.end(), r->begin(), r->end());
  };
  if (v.IsSequence()) {
    reader_.ForEach(v, KeyPath(key), expand);
  } else {
    expand(v, KeyPath(key));
  }
  return names;
}

std::vector<std::string> MapView::StringList(std::string_view key) {
  std::vector<std::string> out;
  YAML::Node v = Value(key);
  if (!v.IsDefined() || v.IsNull() || reader_.failed()) return out;
  auto add = [&](const YAML::Node& n, const std::string& path) {
    std::optional<std::string> s = reader_.Scalar(n, path);
    if (s && s->empty()) reader_.Fail(n.Mark(), path, "must not be empty");
    if (s) out.push_back(*s);
  };
  if (v.IsSequence()) {
    reader_.ForEach(v, KeyPath(key), add);
  } else {
    add(v, KeyPath(key));
  }
  return out;
}

engine::TresLimit MapView::Tres(std::string_view key) {
  engine::TresLimit t;
  MapView m(reader_, Value(key), KeyPath(key));
  constexpr std::int64_t kMax = kUnlimited - 1;
  t.cpus = m.Int("cpu", kUnlimited, 0, kMax, true);
  if (std::optional<std::string> mem = m.String("mem")) {
    t.mem_mb = (IsUnlimited(*mem) || *mem == "-1") ? kUnlimited : m.MemoryMb("mem", kUnlimited);
  }
  if (m.Has("gpu") && m.Has("gres/gpu")) m.Fail("gres/gpu", "gpu is given twice (gpu, gres/gpu)");
  t.gpus = m.Int(m.Has("gres/gpu") ? "gres/gpu" : "gpu", kUnlimited, 0, kMax, true);
  t.nodes = m.Int("node", kUnlimited, 0, kMax, true);
  m.Finish();
  return t;
}

engine::PreemptMode MapView::PreemptMode(std::string_view key, engine::PreemptMode def) {
  using engine::PreemptMode;
  return Enum<PreemptMode>(key,
                           {{"off", PreemptMode::kOff},
                            {"cancel", PreemptMode::kCancel},
                            {"requeue", PreemptMode::kRequeue}},
                           def);
}

void MapView::Finish() {
  for (const Entry& e : entries_) {
    if (!e.used) {
      std::string known;
      for (const std::string& k : asked_) known += (known.empty() ? "" : ", ") + k;
      reader_.Fail(e.key_mark, KeyPath(e.key), "unknown key (known here: " + known + ")");
      return;
    }
  }
}

}  // namespace lockstep::config
