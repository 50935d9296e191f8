// Internal to the trace readers: fast line and field scanning over a whole file held in memory
// (string_view and std::from_chars; no iostreams, no regex, no allocation per field), and the
// "<source>:<line>: ..." errors every reader gives. Not part of the spec API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "trace/trace.h"

namespace lockstep::trace::internal {

// Walks the lines of a text. Lines end at '\n'; a '\r' before it is dropped. The last line
// needs no '\n'. Not thread-safe; views point into the text, which must outlive the reader.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : rest_(text) {}

  // Moves to the next line; false at the end of the text.
  bool Next();
  std::string_view line() const { return line_; }
  // 1-based number of the current line.
  std::int64_t number() const { return number_; }

 private:
  std::string_view rest_;
  std::string_view line_;
  std::int64_t number_ = 0;
  bool done_ = false;
};

// Splits a CSV line at commas (no quoting: a '"' anywhere is reported by the caller as
// unsupported) into views that stay valid until the next call. Fields are trimmed of spaces.
class CsvSplitter {
 public:
  const std::vector<std::string_view>& Split(std::string_view line);

 private:
  std::vector<std::string_view> fields_;
};

// A CSV file with a header row, read row by row: columns are found by their header name,
// every row must have as many fields as the header, blank lines and lines starting with '#'
// are skipped. Errors name the source and the line. Not thread-safe; the text must outlive it.
class CsvTable {
 public:
  CsvTable(std::string_view text, std::string_view source) : lines_(text), source_(source) {}

  // Reads the header: the first line that is not blank or a comment.
  Status ReadHeader();
  const std::vector<std::string_view>& header() const { return header_; }
  // The index of the column with this name, if the header has one.
  std::optional<std::size_t> Column(std::string_view name) const;

  // Moves to the next data row: false at the end, an error for a malformed row.
  Result<bool> NextRow();
  std::string_view Field(std::size_t column) const { return (*row_)[column]; }
  // The field as an integer; an error naming the column when it is empty or not an integer.
  Result<std::int64_t> Int(std::size_t column) const;
  // "<source>:<line>: column '<name>': <message>" for the current row.
  Status ColumnError(std::size_t column, std::string_view message) const;
  // "<source>:<line>: <message>" for the current line.
  Status Error(std::string_view message) const;
  std::int64_t line() const { return lines_.number(); }
  // 1-based number of the current data row.
  std::int64_t row() const { return rows_; }

 private:
  LineReader lines_;
  std::string_view source_;
  std::vector<std::string_view> header_;
  CsvSplitter splitter_;
  const std::vector<std::string_view>* row_ = nullptr;
  std::int64_t rows_ = 0;
};

std::string_view Trim(std::string_view s);

// InvalidArgument "<source>:<line>: <message>".
Status LineError(std::string_view source, std::int64_t line, std::string_view message);

// The whole text as a decimal integer (optional leading '-'); nullopt otherwise, or on overflow.
std::optional<std::int64_t> ToInt64(std::string_view s);
// The whole text as a decimal number, fractional or not ("552.21", "-1", "1e3").
std::optional<double> ToDouble(std::string_view s);

// Stable sort by submit time; cheap when the jobs are already in order, as most traces are.
void SortBySubmit(std::vector<TraceJob>& jobs);

}  // namespace lockstep::trace::internal
