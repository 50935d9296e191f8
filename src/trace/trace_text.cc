#include "trace/trace_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace lockstep::trace::internal {

bool LineReader::Next() {
  if (done_) return false;
  const std::size_t nl = rest_.find('\n');
  if (nl == std::string_view::npos) {
    line_ = rest_;
    rest_ = {};
    done_ = true;  // the text did not end with '\n': this is its last line
    if (line_.empty()) return false;
  } else {
    line_ = rest_.substr(0, nl);
    rest_.remove_prefix(nl + 1);
    if (rest_.empty()) done_ = true;
  }
  if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
  ++number_;
  return true;
}

const std::vector<std::string_view>& CsvSplitter::Split(std::string_view line) {
  fields_.clear();
  while (true) {
    const std::size_t comma = line.find(',');
    fields_.push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return fields_;
}

namespace {

bool IsSkippable(std::string_view line) {
  line = Trim(line);
  return line.empty() || line.front() == '#';
}

}  // namespace

Status CsvTable::ReadHeader() {
  while (lines_.Next()) {
    if (IsSkippable(lines_.line())) continue;
    if (lines_.line().find('"') != std::string_view::npos) {
      return Error("quoted CSV fields are not supported");
    }
    header_ = splitter_.Split(lines_.line());
    return Status::Ok();
  }
  return InvalidArgument(fmt::format("{}: no header line (the file is empty)", source_));
}

std::optional<std::size_t> CsvTable::Column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

Result<bool> CsvTable::NextRow() {
  while (lines_.Next()) {
    if (IsSkippable(lines_.line())) continue;
    if (lines_.line().find('"') != std::string_view::npos) {
      return Error("quoted CSV fields are not supported");
    }
    row_ = &splitter_.Split(lines_.line());
    ++rows_;
    if (row_->size() != header_.size()) {
      return Error(fmt::format("expected {} fields, found {}", header_.size(), row_->size()));
    }
    return true;
  }
  return false;
}

Result<std::int64_t> CsvTable::Int(std::size_t column) const {
  std::string_view text = Field(column);
  if (text.empty()) return ColumnError(column, "empty, expected an integer");
  std::optional<std::int64_t> v = ToInt64(text);
  if (!v) return ColumnError(column, fmt::format("'{}' is not an integer", text));
  return *v;
}

Status CsvTable::ColumnError(std::size_t column, std::string_view message) const {
  return Error(fmt::format("column '{}': {}", header_[column], message));
}

Status CsvTable::Error(std::string_view message) const {
  return LineError(source_, lines_.number(), message);
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

Status LineError(std::string_view source, std::int64_t line, std::string_view message) {
  return InvalidArgument(fmt::format("{}:{}: {}", source, line, message));
}

std::optional<std::int64_t> ToInt64(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || ptr != end || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ToDouble(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
  if (ec != std::errc() || ptr != end || s.empty() || !std::isfinite(v)) return std::nullopt;
  return v;
}

void SortBySubmit(std::vector<TraceJob>& jobs) {
  auto by_submit = [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; };
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_submit)) {
    std::stable_sort(jobs.begin(), jobs.end(), by_submit);
  }
}

}  // namespace lockstep::trace::internal
