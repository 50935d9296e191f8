#include "cli/format/sprio.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <vector>

#include "cli/format/field_format.h"
#include "cli/format/unknown_letters.h"

namespace lockstep::cli {
namespace {

struct Letter {
  char letter;
  const char* header;
};

constexpr std::array<Letter, 23> kLetters = {{
    {'a', "AGE"},       {'A', "AGE"},       {'b', "ASSOC"}, {'B', "ASSOC"},
    {'f', "FAIRSHARE"}, {'F', "FAIRSHARE"}, {'i', "JOBID"}, {'j', "JOBSIZE"},
    {'J', "JOBSIZE"},   {'n', "QOSNAME"},   {'N', "NICE"},  {'o', "ACCOUNT"},
    {'p', "PARTITION"}, {'P', "PARTITION"}, {'q', "QOS"},   {'Q', "QOS"},
    {'r', "PARTITION"}, {'S', "SITE"},      {'t', "TRES"},  {'T', "TRES"},
    {'u', "USER"},      {'y', "PRIORITY"},  {'c', "CLUSTER"},
}};

const char* Header(char letter) {
  if (letter == 'Y') return "PRIORITY";
  for (const auto& l : kLetters) {
    if (l.letter == letter) return l.header;
  }
  return nullptr;
}

// The API member behind each factor letter (weighted upper case, normalized lower case).
const char* FactorKey(char letter) {
  switch (std::toupper(static_cast<unsigned char>(letter))) {
    case 'A':
      return "age";
    case 'B':
      return "assoc";
    case 'F':
      return "fairshare";
    case 'J':
      return "job_size";
    case 'P':
      return "partition_factor";
    case 'Q':
      return "qos";
    default:
      return nullptr;
  }
}

std::int64_t FactorWeight(char letter, const SprioWeights& w) {
  switch (std::toupper(static_cast<unsigned char>(letter))) {
    case 'A':
      return w.age;
    case 'B':
      return w.assoc;
    case 'F':
      return w.fairshare;
    case 'J':
      return w.job_size;
    case 'P':
      return w.partition;
    case 'Q':
      return w.qos;
    default:
      return 0;
  }
}

std::string Weighted(double v) {
  return fmt::format("{:.0f}", v);
}

std::string Tres(const nlohmann::json& p) {
  auto it = p.find("tres");
  if (it == p.end()) return "";
  if (it->is_number()) return it->get<double>() == 0.0 ? "" : Weighted(it->get<double>());
  if (!it->is_object()) return "";
  std::vector<std::string> parts;
  for (const auto& [name, value] : it->items()) {
    if (value.is_number() && value.get<double>() != 0.0) {
      parts.push_back(fmt::format("{}={:.0f}", EscapeControl(name), value.get<double>()));
    }
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

// The value of `letter` for one job, or for the weights line when `p` is null.
std::string Value(char letter, const nlohmann::json* p, const SprioWeights& w) {
  if (p == nullptr) {  // sprio -w
    if (letter == 'i') return "Weights";
    if (letter == 'S') return "1";
    if (letter == 'T') return w.tres;
    if (FactorKey(letter)) return fmt::format("{}", FactorWeight(letter, w));
    return "";
  }
  switch (letter) {
    case 'i':
      return fmt::format("{}", JIntOr(*p, "job_id", 0));
    case 'r':
      return JStr(*p, "partition");
    case 'u':
      return JStr(*p, "user");
    case 'o':
      return JStr(*p, "account");
    case 'c':
      return JStr(*p, "cluster");
    case 'n':
      return JStr(*p, "qos_name");
    case 'Y':
      return fmt::format("{}", JIntOr(*p, "priority", 0));
    case 'y':
      return fmt::format("{:16.14f}",
                         static_cast<double>(JIntOr(*p, "priority", 0)) / 4294967295.0);
    case 'S':
      return Weighted(JDouble(*p, "site"));
    case 'N':
      return fmt::format("{}", JIntOr(*p, "nice", 0));
    case 'T':
      return Tres(*p);
    case 't':
      return "";
    default:
      break;
  }
  const char* key = FactorKey(letter);
  double factor = JDouble(*p, key);
  if (std::isupper(static_cast<unsigned char>(letter))) return Weighted(factor);
  std::int64_t weight = FactorWeight(letter, w);
  return fmt::format("{:.7f}", weight ? factor / static_cast<double>(weight) : 0.0);
}

std::string DefaultFormat(const SprioOptions& o, const SprioWeights& w, bool weights_known) {
  if (o.long_format) return o.normalized ? kSprioNormalizedLongFormat : kSprioLongFormat;
  std::string format = "%.15i %9r";
  if (o.show_user) format += " %.8u";
  format += o.normalized ? " %10y" : " %.10Y %.10S";
  const char* norm = o.normalized ? " %10" : " %.10";
  bool known = weights_known;
  if (!known || w.age) format += std::string(norm) + (o.normalized ? "a" : "A");
  if (known && w.assoc) format += std::string(norm) + (o.normalized ? "b" : "B");
  if (!known || w.fairshare) format += std::string(norm) + (o.normalized ? "f" : "F");
  if (!known || w.job_size) format += std::string(norm) + (o.normalized ? "j" : "J");
  if (!known || w.partition) format += std::string(norm) + (o.normalized ? "p" : "P");
  if (!known || w.qos) format += std::string(norm) + (o.normalized ? "q" : "Q");
  if (known && !w.tres.empty()) format += o.normalized ? " %20t" : " %.20T";
  return format;
}

Status SortPriorities(std::vector<const nlohmann::json*>& rows, std::string_view sort) {
  for (std::size_t i = sort.size(); i-- > 0;) {
    char c = sort[i];
    if (c == ',' || c == '+' || c == '-') continue;
    bool reverse = i > 0 && sort[i - 1] == '-';
    std::function<bool(const nlohmann::json*, const nlohmann::json*)> less;
    if (c == 'u' || c == 'r' || c == 'o') {
      const char* key = c == 'u' ? "user" : c == 'r' ? "partition" : "account";
      less = [key](auto* a, auto* b) { return JStr(*a, key) < JStr(*b, key); };
    } else if (c == 'i' || c == 'Y' || c == 'y' || c == 'N') {
      const char* key = c == 'i' ? "job_id" : c == 'N' ? "nice" : "priority";
      less = [key](auto* a, auto* b) { return JIntOr(*a, key, 0) < JIntOr(*b, key, 0); };
    } else if (FactorKey(c)) {
      const char* key = FactorKey(c);
      less = [key](auto* a, auto* b) { return JDouble(*a, key) < JDouble(*b, key); };
    } else {
      return InvalidArgument(fmt::format("sprio: invalid sort specification: {}", c));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [&](auto* a, auto* b) { return reverse ? less(b, a) : less(a, b); });
  }
  return Status::Ok();
}

}  // namespace

bool SprioLetterKnown(char letter) { return Header(letter) != nullptr; }

Result<std::string> FormatSprio(const nlohmann::json& priorities, const SprioOptions& options) {
  if ((options.normalized || options.weights_only) && !options.weights) {
    return InvalidArgument("sprio: -n and -w need the cluster's priority weights");
  }
  SprioWeights weights = options.weights.value_or(SprioWeights{});
  std::string format = options.format.empty()
                           ? DefaultFormat(options, weights, options.weights.has_value())
                           : options.format;
  Result<FormatSpec> spec = ParseFormat(format, "sprio");
  if (!spec.ok()) return spec.status();
  SettleUnknownLetters(*spec, [](char c) { return Header(c) != nullptr; }, UnknownLetter::kDrop,
                       /*allow_auto_width=*/false);
  Result<std::vector<const nlohmann::json*>> records = Records(priorities, "priorities");
  if (!records.ok()) return records.status();
  std::vector<const nlohmann::json*> rows = *records;
  LOCKSTEP_RETURN_IF_ERROR(SortPriorities(rows, options.sort.empty() ? "i" : options.sort));
  if (options.weights_only) rows = {nullptr};

  std::string out;
  auto line = [&](auto&& text_of) {
    out += spec->prefix;
    for (const FieldSpec& f : spec->fields) {
      out += FitField(text_of(f.letter), f.width, f.right, true) + f.suffix;
    }
    out += '\n';
  };
  if (!options.noheader) line([](char letter) { return std::string(Header(letter)); });
  for (const nlohmann::json* p : rows) {
    line([&](char letter) { return Value(letter, p, weights); });
  }
  return out;
}

}  // namespace lockstep::cli
