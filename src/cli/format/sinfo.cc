#include "cli/format/sinfo.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <limits>
#include <list>
#include <memory>

#include "cli/format/field_format.h"
#include "cli/format/unknown_letters.h"
#include "cli/format/sinfo_record.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

// Slurm's minimum widths of the '#' columns (MIN_PART_FIELD_SIZE, MIN_NODE_FIELD_SIZE).
constexpr int kMinAutoWidth = 9;

std::string ChooseFormat(const SinfoOptions& o) {
  if (!o.format.empty()) return o.format;
  if (o.summarize) return kSinfoSummarizeFormat;
  if (o.node_oriented) return o.long_format ? kSinfoNodeLongFormat : kSinfoNodeFormat;
  if (o.list_reasons) return o.long_format ? kSinfoReasonLongFormat : kSinfoReasonFormat;
  return o.long_format ? kSinfoLongFormat : kSinfoDefaultFormat;
}

// Which letters the format shows: they decide how nodes group into lines (Slurm's match_flags).
struct Grouping {
  std::string part_letters;   // partition attributes compared between partitions
  std::string node_letters;   // node attributes that split lines
  bool by_partition = false;  // 'P' or 'R': every partition gets a line, even without nodes
  bool node_oriented = false;
  bool list_reasons = false;
};

Grouping GroupingFor(const FormatSpec& spec, const SinfoOptions& o) {
  Grouping g;
  g.node_oriented = o.node_oriented;
  g.list_reasons = o.list_reasons;
  for (const FieldSpec& f : spec.fields) {
    if (IsPartitionLetter(f.letter)) g.part_letters += f.letter;
    if (f.letter == 'P' || f.letter == 'R') g.by_partition = true;
    if (IsNodeMatchLetter(f.letter) || (o.exact && IsExactMatchLetter(f.letter))) {
      g.node_letters += f.letter;
    }
  }
  return g;
}

bool MatchPartition(const Grouping& g, const SinfoRecord& r, const nlohmann::json* part) {
  if (g.list_reasons || r.part == part) return true;
  if (r.part == nullptr || part == nullptr) return false;
  for (char letter : g.part_letters) {
    if (PartitionValue(letter, r.part) != PartitionValue(letter, part)) return false;
  }
  return true;
}

bool MatchNode(const Grouping& g, const SinfoRecord& r, const SinfoNode& node) {
  if (g.node_oriented) return false;
  for (char letter : g.node_letters) {
    if (NodeMatchValue(letter, *r.first) != NodeMatchValue(letter, node)) return false;
  }
  return true;
}

// Slurm's _insert_node_ptr: the first line whose partition and node attributes match takes the
// node; otherwise a new line starts.
void Insert(std::list<SinfoRecord>& records, const Grouping& g, const nlohmann::json* part,
            int part_inx, const SinfoNode& node) {
  // With -N no line takes a second node (MatchNode is false), so the search is skipped: it would
  // be quadratic in the number of nodes.
  for (SinfoRecord& r : records) {
    if (g.node_oriented) break;
    if (!MatchPartition(g, r, part)) continue;
    if (r.nodes_total && !MatchNode(g, r, node)) continue;
    r.Add(node);
    return;
  }
  SinfoRecord r;
  r.part = part;
  r.part_inx = part_inx;
  r.Add(node);
  records.push_back(std::move(r));
}

bool InPartition(const nlohmann::json& node, const std::string& name,
                 const std::vector<std::string>& part_hosts) {
  auto it = node.find("partitions");
  if (it != node.end() && it->is_array()) {
    return std::any_of(it->begin(), it->end(),
                       [&](const nlohmann::json& p) { return p.is_string() && p == name; });
  }
  return std::find(part_hosts.begin(), part_hosts.end(), JStr(node, "name")) != part_hosts.end();
}

std::string FirstHostSorted(const SinfoRecord& r) {
  if (r.names.empty()) return "";
  return *std::min_element(r.names.begin(), r.names.end(), HostNameLess);
}

// sinfo's node-name comparison (sort.c _sort_by_node_list): at the first differing character,
// numbers compare by value.
int CompareNodeNames(const std::string& a, const std::string& b) {
  for (std::size_t i = 0;; ++i) {
    char ca = i < a.size() ? a[i] : '\0', cb = i < b.size() ? b[i] : '\0';
    if (ca == cb) {
      if (ca == '\0') return 0;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(ca)) &&
        std::isdigit(static_cast<unsigned char>(cb))) {
      return std::atoi(a.c_str() + i) - std::atoi(b.c_str() + i);
    }
    return a.compare(b) < 0 ? -1 : 1;
  }
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

using RecordCompare = std::function<int(const SinfoRecord&, const SinfoRecord&)>;

std::int64_t TimeKey(const SinfoRecord& r, const char* key) {
  if (r.part == nullptr) return 0;
  if (JIsNull(*r.part, key)) return std::numeric_limits<std::int64_t>::max();
  return JIntOr(*r.part, key, 0);
}

Result<RecordCompare> SortKey(char key, bool part_order) {
  auto by = [](auto f) {
    return RecordCompare(
        [f](const SinfoRecord& a, const SinfoRecord& b) { return Cmp(f(a), f(b)); });
  };
  auto text = [](char letter) {
    return RecordCompare([letter](const SinfoRecord& a, const SinfoRecord& b) {
      return Cmp(RecordValue(letter, a), RecordValue(letter, b));
    });
  };
  switch (key) {
    case 'P':
      if (part_order) return by([](const SinfoRecord& r) { return r.part_inx; });
      return by([](const SinfoRecord& r) { return r.part ? JStr(*r.part, "name") : ""; });
    case 't':
    case 'T':
      return by([](const SinfoRecord& r) { return r.first ? r.first->state.code : 0u; });
    case 'N':
      return RecordCompare([](const SinfoRecord& a, const SinfoRecord& b) {
        return CompareNodeNames(FirstHostSorted(a), FirstHostSorted(b));
      });
    case 'D':
      return by([](const SinfoRecord& r) { return r.nodes_total; });
    case 'A':
    case 'F':
      return by([](const SinfoRecord& r) { return r.nodes_alloc; });
    case 'c':
      return by([](const SinfoRecord& r) { return r.cpus.min; });
    case 'd':
      return by([](const SinfoRecord& r) { return r.disk.min; });
    case 'm':
      return by([](const SinfoRecord& r) { return r.mem.min; });
    case 'w':
      return by([](const SinfoRecord& r) { return r.weight.min; });
    case 'l':
      return by([](const SinfoRecord& r) { return TimeKey(r, "max_time"); });
    case 'p':
      return by(
          [](const SinfoRecord& r) { return r.part ? JIntOr(*r.part, "priority_tier", 1) : 0; });
    case 'a':
    case 'f':
    case 'g':
    case 'h':
    case 'r':
    case 's':
      return text(key);
    case 'E':
    case 'R':
      return text('E');
    default:
      return InvalidArgument(fmt::format("sinfo: invalid sort specification: {}", key));
  }
}

// Slurm's sort_sinfo_list: keys from last to first, each a stable sort.
Status SortRecords(std::vector<const SinfoRecord*>& rows, std::string_view sort) {
  for (std::size_t i = sort.size(); i-- > 0;) {
    char c = sort[i];
    if (c == ',' || c == '#' || c == '+' || c == '-') continue;
    bool reverse = i > 0 && sort[i - 1] == '-';
    bool part_order = i > 0 && sort[i - 1] == '#';
    Result<RecordCompare> cmp = SortKey(c, part_order);
    if (!cmp.ok()) return cmp.status();
    std::stable_sort(rows.begin(), rows.end(), [&](const SinfoRecord* a, const SinfoRecord* b) {
      int d = (*cmp)(*a, *b);
      return reverse ? d > 0 : d < 0;
    });
  }
  return Status::Ok();
}

// The partition column: the name with '*' for the default partition, squeezed into the width as
// _print_partition does.
std::string PartitionCell(const SinfoRecord& r, int width) {
  if (r.part == nullptr) return "n/a";
  std::string name = JStr(*r.part, "name");
  if (JBool(*r.part, "default")) {
    if (width == 0 || static_cast<int>(name.size()) < width) {
      name += '*';
    } else {
      name[static_cast<std::size_t>(width) - 1] = '*';
    }
  }
  return name;
}

}  // namespace

Result<std::string> FormatSinfo(const nlohmann::json& partitions, const nlohmann::json& nodes,
                                const SinfoOptions& options) {
  Result<FormatSpec> spec = ParseFormat(ChooseFormat(options), "sinfo");
  if (!spec.ok()) return spec.status();
  SettleUnknownLetters(*spec, [](char c) { return SinfoHeader(c) != nullptr; },
                       UnknownLetter::kAsText);
  Result<std::vector<const nlohmann::json*>> parts = Records(partitions, "partitions");
  if (!parts.ok()) return parts.status();
  Result<std::vector<const nlohmann::json*>> node_json = Records(nodes, "nodes");
  if (!node_json.ok()) return node_json.status();

  std::vector<std::unique_ptr<SinfoNode>> node_info;
  for (const nlohmann::json* n : *node_json) {
    auto node = std::make_unique<SinfoNode>(ReadSinfoNode(*n));
    // -R reports down, drained, draining and failed nodes (opts.c: "down,fail,drain").
    if (options.list_reasons && !(node->state.down || node->state.drain || node->state.fail)) {
      node.reset();
    }
    node_info.push_back(std::move(node));
  }

  Grouping grouping = GroupingFor(*spec, options);
  std::list<SinfoRecord> records;
  if (!options.node_oriented && grouping.by_partition) {
    for (std::size_t j = 0; j < parts->size(); ++j) {
      SinfoRecord r;
      r.part = (*parts)[j];
      r.part_inx = static_cast<int>(j);
      records.push_back(std::move(r));
    }
  }
  for (std::size_t j = 0; j < parts->size(); ++j) {
    const nlohmann::json* part = (*parts)[j];
    std::string name = JStr(*part, "name");
    Result<std::vector<std::string>> hosts = ExpandHostlist(JStr(*part, "nodes"));
    std::vector<std::string> part_hosts = hosts.ok() ? *hosts : std::vector<std::string>{};
    for (std::size_t k = 0; k < node_json->size(); ++k) {
      if (!node_info[k] || !InPartition(*(*node_json)[k], name, part_hosts)) continue;
      Insert(records, grouping, part, static_cast<int>(j), *node_info[k]);
    }
  }

  std::vector<const SinfoRecord*> rows;
  for (const SinfoRecord& r : records) rows.push_back(&r);
  std::string sort = options.sort.empty() ? (options.node_oriented ? "N" : "#P,-t") : options.sort;
  LOCKSTEP_RETURN_IF_ERROR(SortRecords(rows, sort));

  int part_width = kMinAutoWidth, node_width = kMinAutoWidth;
  std::vector<std::string> nodelists;
  for (const SinfoRecord* r : rows) {
    nodelists.push_back(SortedHostlist(r->names));
    node_width = std::max(node_width, static_cast<int>(nodelists.back().size()));
    if (r->part) {
      int w =
          static_cast<int>(JStr(*r->part, "name").size()) + (JBool(*r->part, "default") ? 1 : 0);
      part_width = std::max(part_width, w);
    }
  }
  auto width_of = [&](const FieldSpec& f) {
    if (!f.auto_width) return f.width;
    return f.letter == 'N' ? node_width : f.letter == 'P' || f.letter == 'R' ? part_width : 0;
  };

  std::string out;
  if (!options.noheader) {
    if (options.long_format) out += DateLine(options.now) + "\n";
    out += spec->prefix;
    for (const FieldSpec& f : spec->fields) {
      out += FitField(SinfoHeader(f.letter), width_of(f), f.right, f.letter != 'N') + f.suffix;
    }
    out += '\n';
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SinfoRecord& r = *rows[i];
    out += spec->prefix;
    for (const FieldSpec& f : spec->fields) {
      int width = width_of(f);
      // lockstep's nodes are named by their host: HOSTNAMES and NODE_ADDR are the node list.
      const bool node_list = f.letter == 'N' || f.letter == 'n' || f.letter == 'o';
      std::string text = node_list         ? nodelists[i]
                         : f.letter == 'P' ? PartitionCell(r, width)
                                           : RecordValue(f.letter, r);
      out += FitField(text, width, f.right, true) + f.suffix;
    }
    out += '\n';
  }
  return out;
}

}  // namespace lockstep::cli
