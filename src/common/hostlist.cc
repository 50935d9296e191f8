#include "common/hostlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace lockstep {
namespace {

// A number with the width its range was written with ("008" is 8 of width 3).
struct Range {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  std::size_t width = 1;
};

// One piece of a host expression: literal text, or a bracket group of ranges.
struct Piece {
  std::string text;
  std::vector<Range> ranges;  // empty for literal text
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

Status Bad(std::string_view hostlist, std::string_view why) {
  return InvalidArgument(fmt::format("invalid hostlist '{}': {}", hostlist, why));
}

std::string FormatNumber(std::uint64_t n, std::size_t width) {
  return fmt::format("{:0{}}", n, width);
}

Result<std::uint64_t> ParseNumber(std::string_view all, std::string_view digits) {
  if (digits.empty()) return Bad(all, "empty number in brackets");
  for (char c : digits) {
    if (!IsDigit(c)) return Bad(all, fmt::format("'{}' in brackets is not a number", digits));
  }
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc()) return Bad(all, fmt::format("number '{}' is too large", digits));
  return v;
}

// Parses the inside of one bracket group: "0-64,128". Returns the number of hosts it names.
Result<std::uint64_t> ParseGroup(std::string_view all, std::string_view inside,
                                 std::vector<Range>& ranges) {
  if (inside.empty()) return Bad(all, "empty brackets");
  std::uint64_t count = 0;
  while (true) {
    const std::size_t comma = inside.find(',');
    std::string_view item = inside.substr(0, comma);
    const std::size_t dash = item.find('-');
    std::string_view lo_text = item.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    Result<std::uint64_t> lo = ParseNumber(all, lo_text);
    if (!lo.ok()) return lo.status();
    Result<std::uint64_t> hi = ParseNumber(all, hi_text);
    if (!hi.ok()) return hi.status();
    if (*hi < *lo) return Bad(all, fmt::format("range '{}' is reversed", item));
    if (*hi - *lo >= kMaxHostlistHosts) {
      return Bad(all, fmt::format("range '{}' names more than {} hosts", item, kMaxHostlistHosts));
    }
    ranges.push_back(Range{*lo, *hi, lo_text.size()});
    count += *hi - *lo + 1;
    if (count > kMaxHostlistHosts) {
      return Bad(all, fmt::format("more than {} hosts", kMaxHostlistHosts));
    }
    if (comma == std::string_view::npos) return count;
    inside.remove_prefix(comma + 1);
  }
}

// Expands one host expression (no top-level separators) and appends its hosts to `out`.
Status ExpandExpression(std::string_view all, std::string_view expr,
                        std::vector<std::string>& out) {
  std::vector<Piece> pieces;
  std::uint64_t total = 1;
  std::size_t i = 0;
  while (i < expr.size()) {
    const std::size_t open = expr.find('[', i);
    if (open != i) {
      pieces.push_back(Piece{std::string(expr.substr(i, open - i)), {}});
      if (open == std::string_view::npos) break;
    }
    const std::size_t close = expr.find(']', open);
    Piece group;
    Result<std::uint64_t> n =
        ParseGroup(all, expr.substr(open + 1, close - open - 1), group.ranges);
    if (!n.ok()) return n.status();
    total *= *n;  // both factors are at most kMaxHostlistHosts: no overflow
    if (total + out.size() > kMaxHostlistHosts) {
      return Bad(all, fmt::format("more than {} hosts", kMaxHostlistHosts));
    }
    pieces.push_back(std::move(group));
    i = close + 1;
  }

  // An odometer over the bracket groups, the first group outermost.
  std::vector<std::pair<std::size_t, std::uint64_t>> pos(pieces.size(), {0, 0});
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    if (!pieces[p].ranges.empty()) pos[p].second = pieces[p].ranges[0].lo;
  }
  for (std::uint64_t h = 0; h < total; ++h) {
    std::string name;
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      if (pieces[p].ranges.empty()) {
        name += pieces[p].text;
      } else {
        name += FormatNumber(pos[p].second, pieces[p].ranges[pos[p].first].width);
      }
    }
    out.push_back(std::move(name));
    for (std::size_t p = pieces.size(); p-- > 0;) {  // advance the innermost group first
      const std::vector<Range>& r = pieces[p].ranges;
      if (r.empty()) continue;
      if (pos[p].second < r[pos[p].first].hi) {
        ++pos[p].second;
        break;
      }
      pos[p].first = (pos[p].first + 1) % r.size();
      pos[p].second = r[pos[p].first].lo;
      if (pos[p].first != 0) break;  // no carry into the next group out
    }
  }
  return Status::Ok();
}

// Checks brackets and splits the hostlist into host expressions: at commas outside brackets,
// then at whitespace. Every comma-separated item must name at least one host.
Result<std::vector<std::string_view>> SplitExpressions(std::string_view all) {
  std::vector<std::string_view> exprs;
  bool in_brackets = false;
  std::size_t item_start = 0;  // of the current comma-separated item
  std::size_t item_exprs = 0;  // expressions found in it so far
  std::size_t expr_start = 0;
  for (std::size_t i = 0; i <= all.size(); ++i) {
    const char c = i < all.size() ? all[i] : ',';  // a comma after the end closes the last item
    if (c == '[') {
      if (in_brackets) return Bad(all, fmt::format("nested '[' at offset {}", i));
      in_brackets = true;
    } else if (c == ']') {
      if (!in_brackets) return Bad(all, fmt::format("']' without '[' at offset {}", i));
      in_brackets = false;
    } else if (in_brackets) {
      if (IsSpace(c)) return Bad(all, fmt::format("whitespace inside brackets at offset {}", i));
      if (i == all.size()) return Bad(all, "'[' without ']'");
    } else if (c == ',' || IsSpace(c)) {
      if (i > expr_start) {
        exprs.push_back(all.substr(expr_start, i - expr_start));
        ++item_exprs;
      }
      expr_start = i + 1;
      if (c == ',') {
        if (item_exprs == 0) {
          return Bad(all, fmt::format("empty host name at offset {}", item_start));
        }
        item_start = i + 1;
        item_exprs = 0;
      }
    }
  }
  return exprs;
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view hostlist) {
  Result<std::vector<std::string_view>> exprs = SplitExpressions(hostlist);
  if (!exprs.ok()) return exprs.status();
  std::vector<std::string> hosts;
  for (std::string_view e : *exprs) LOCKSTEP_RETURN_IF_ERROR(ExpandExpression(hostlist, e, hosts));
  return hosts;
}

namespace {

// A host split into the text before its trailing digits and those digits.
struct SplitName {
  std::string_view prefix;
  std::string_view digits;  // empty: no trailing number (or too long to be one)
  std::uint64_t value = 0;
  bool padded() const { return digits.size() > 1 && digits[0] == '0'; }
};

SplitName Split(std::string_view host) {
  std::size_t k = host.size();
  while (k > 0 && IsDigit(host[k - 1])) --k;
  SplitName s{host.substr(0, k), host.substr(k), 0};
  if (s.digits.size() > 18) return SplitName{host, {}, 0};  // not a number we can range over
  if (!s.digits.empty())
    std::from_chars(s.digits.data(), s.digits.data() + s.digits.size(), s.value);
  return s;
}

struct Group {
  std::string prefix;
  std::size_t width = 0;  // 0: a name without a number, written as it is
  std::vector<std::uint64_t> values;
};

std::string FormatGroup(Group& g) {
  if (g.width == 0) return g.prefix;
  std::sort(g.values.begin(), g.values.end());
  g.values.erase(std::unique(g.values.begin(), g.values.end()), g.values.end());
  if (g.values.size() == 1) return g.prefix + FormatNumber(g.values[0], g.width);
  std::string out = g.prefix + "[";
  for (std::size_t i = 0; i < g.values.size();) {
    std::size_t j = i;
    while (j + 1 < g.values.size() && g.values[j + 1] == g.values[j] + 1) ++j;
    if (i > 0) out += ',';
    out += FormatNumber(g.values[i], g.width);
    if (j > i) out += '-' + FormatNumber(g.values[j], g.width);
    i = j + 1;
  }
  return out + "]";
}

}  // namespace

std::string CompressHostlist(const std::vector<std::string>& hosts) {
  std::vector<SplitName> names;
  names.reserve(hosts.size());
  // The zero-padded widths seen for each prefix: a plain number joins the widest of them that
  // is no wider than itself, so "n099","n100" stay one group "n[099-100]".
  std::unordered_map<std::string_view, std::set<std::size_t>> padded_widths;
  for (const std::string& h : hosts) {
    names.push_back(Split(h));
    if (names.back().padded())
      padded_widths[names.back().prefix].insert(names.back().digits.size());
  }

  std::vector<Group> groups;
  std::map<std::pair<std::string_view, std::size_t>, std::size_t> index;  // (prefix, width)
  for (const SplitName& n : names) {
    std::size_t width = 0;
    if (!n.digits.empty()) {
      width = 1;
      if (n.padded()) {
        width = n.digits.size();
      } else if (auto it = padded_widths.find(n.prefix); it != padded_widths.end()) {
        auto w = it->second.upper_bound(n.digits.size());
        if (w != it->second.begin()) width = *std::prev(w);
      }
    }
    auto [it, inserted] = index.try_emplace({n.prefix, width}, groups.size());
    if (inserted) groups.push_back(Group{std::string(n.prefix), width, {}});
    if (width > 0) groups[it->second].values.push_back(n.value);
  }

  std::string out;
  for (Group& g : groups) {
    if (!out.empty()) out += ',';
    out += FormatGroup(g);
  }
  return out;
}

}  // namespace lockstep
