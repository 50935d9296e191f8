#include "controller/exposition.h"

#include <fmt/format.h>

#include <iterator>

namespace lockstep::controller {

void Exposition::Family(std::string_view name, std::string_view type, std::string_view help) {
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void Exposition::Sample(std::string_view name, std::int64_t value) {
  fmt::format_to(std::back_inserter(out_), "{} {}\n", name, value);
}

void Exposition::Sample(std::string_view name, double value) {
  fmt::format_to(std::back_inserter(out_), "{} {}\n", name, value);
}

void Exposition::Escaped(std::string_view value) {
  for (char c : value) {
    if (c == '\\')
      out_ += "\\\\";
    else if (c == '"')
      out_ += "\\\"";
    else if (c == '\n')
      out_ += "\\n";
    else
      out_ += c;
  }
}

void Exposition::Sample(std::string_view name, Label label, std::int64_t value) {
  out_ += name;
  Labels({label});
  fmt::format_to(std::back_inserter(out_), " {}\n", value);
}

void Exposition::Sample(std::string_view name, Label label, double value) {
  out_ += name;
  Labels({label});
  fmt::format_to(std::back_inserter(out_), " {}\n", value);
}

void Exposition::Sample(std::string_view name, std::initializer_list<Label> labels,
                        std::int64_t value) {
  out_ += name;
  Labels(labels);
  fmt::format_to(std::back_inserter(out_), " {}\n", value);
}

void Exposition::Gauge(std::string_view name, std::string_view help, std::int64_t value) {
  Family(name, "gauge", help);
  Sample(name, value);
}

void Exposition::Labels(std::initializer_list<Label> labels, std::string_view extra_name,
                        std::string_view extra_value) {
  if (labels.size() == 0 && extra_name.empty()) return;
  out_ += '{';
  bool first = true;
  auto one = [&](std::string_view k, std::string_view v) {
    if (!first) out_ += ',';
    first = false;
    out_ += k;
    out_ += "=\"";
    Escaped(v);
    out_ += '"';
  };
  for (const Label& l : labels) one(l.first, l.second);
  if (!extra_name.empty()) one(extra_name, extra_value);
  out_ += '}';
}

void Exposition::Histogram(std::string_view name, std::initializer_list<Label> labels,
                           const LatencyHistogram::Reading& r) {
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b < LatencyHistogram::kBuckets; ++b) {
    cumulative += r.buckets[b];
    const std::string le = b < LatencyHistogram::kBounds.size()
                               ? fmt::format("{}", LatencyHistogram::kBounds[b])
                               : std::string("+Inf");
    out_ += name;
    out_ += "_bucket";
    Labels(labels, "le", le);
    fmt::format_to(std::back_inserter(out_), " {}\n", cumulative);
  }
  out_ += name;
  out_ += "_sum";
  Labels(labels);
  fmt::format_to(std::back_inserter(out_), " {}\n", r.sum_seconds);
  out_ += name;
  out_ += "_count";
  Labels(labels);
  fmt::format_to(std::back_inserter(out_), " {}\n", r.count);
}

}  // namespace lockstep::controller
