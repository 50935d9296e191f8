// Prometheus' text exposition format (version 0.0.4): families with their HELP and TYPE lines,
// samples with escaped label values, histograms with cumulative `le` buckets.
//
// Thread-safety: none; one writer per scrape.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "common/latency_histogram.h"

namespace lockstep::controller {

using Label = std::pair<std::string_view, std::string_view>;

class Exposition {
 public:
  // Starts a family: every sample of `name` must follow before the next family.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, std::int64_t value);
  void Sample(std::string_view name, double value);
  void Sample(std::string_view name, Label label, std::int64_t value);
  void Sample(std::string_view name, Label label, double value);
  void Sample(std::string_view name, std::initializer_list<Label> labels, std::int64_t value);
  // A gauge with no labels, family and sample at once.
  void Gauge(std::string_view name, std::string_view help, std::int64_t value);
  // One histogram series (the family started by the caller), under `labels`.
  void Histogram(std::string_view name, std::initializer_list<Label> labels,
                 const LatencyHistogram::Reading& r);

  std::string& text() { return out_; }

 private:
  void Labels(std::initializer_list<Label> labels, std::string_view extra_name = {},
              std::string_view extra_value = {});
  void Escaped(std::string_view value);
  std::string out_;
};

}  // namespace lockstep::controller
