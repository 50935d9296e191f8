#include "cli/format/sacct.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <vector>

#include "cli/format/field_format.h"
#include "cli/format/sacct_fields.h"

namespace lockstep::cli {
namespace {

struct Column {
  const SacctField* field;
  int width;  // signed as in Slurm: negative is left-justified
};

bool IsPrefixOfAll(std::string_view name) {
  constexpr std::string_view kAll = "ALL";
  if (name.empty() || name.size() > kAll.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(name[i])) != kAll[i]) return false;
  return true;
}

// The width after '%' in a token ("state%-12"), 0 when none is given.
Result<int> WidthOf(std::string_view token, std::size_t percent) {
  if (percent == std::string_view::npos) return 0;
  std::string_view digits = token.substr(percent + 1);
  int width = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), width);
  if (ec != std::errc() || end != digits.data() + digits.size() || std::abs(width) > 10000)
    return InvalidArgument(fmt::format("sacct: bad field width in \"{}\"", token));
  return width;
}

// Parses "jobid,jobname%20,state%-12" as sacct's options.c does: each name a prefix of a field,
// "%N" replacing its width (a negative width left-justifies). Empty names are skipped.
Result<std::vector<Column>> ParseFields(std::string_view format) {
  std::vector<Column> columns;
  std::size_t start = 0;
  while (start <= format.size()) {
    std::size_t comma = format.find(',', start);
    std::string_view token = format.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? format.size() + 1 : comma + 1;
    std::size_t percent = token.find('%');
    std::string_view name = token.substr(0, percent);
    if (name.empty() && percent == std::string_view::npos) continue;
    if (IsPrefixOfAll(name)) {  // Slurm tests "ALL" before the fields: "-o a" is every field
      Result<int> width = WidthOf(token, percent);
      if (!width.ok()) return width.status();
      for (const SacctField& field : AllSacctFields())
        columns.push_back({&field, *width != 0 ? *width : field.width});
      continue;
    }
    const SacctField* field = FindSacctField(name);
    if (field == nullptr) {
      return InvalidArgument(fmt::format("sacct: invalid field requested: \"{}\"", name));
    }
    Result<int> width = WidthOf(token, percent);
    if (!width.ok()) return width.status();
    columns.push_back({field, *width != 0 ? *width : field->width});
  }
  if (columns.empty()) return InvalidArgument("sacct: no fields requested");
  return columns;
}

// print_fields_* for one column of a fixed-width line, with its trailing space.
std::string FixedCell(const Column& c, const std::optional<std::string>& value) {
  int width = std::abs(c.width);
  bool right = c.width > 0;
  if (!value) return FitField(" ", width, right, true) + " ";
  std::string text = *value;
  switch (c.field->kind) {
    case SacctKind::kString:
      if (static_cast<int>(text.size()) > width) {
        text.resize(static_cast<std::size_t>(width));
        if (width > 0) text.back() = '+';
      }
      return FitField(text, width, right, true) + " ";
    case SacctKind::kDate:
      return FitField(text.substr(0, static_cast<std::size_t>(width)), width, right, true) + " ";
    case SacctKind::kNumber:
    case SacctKind::kDuration:
      return FitField(text, width, right, false) + " ";
  }
  return " ";
}

std::string Line(const std::vector<Column>& columns,
                 const std::vector<std::optional<std::string>>& values,
                 const SacctOptions& options) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (options.parsable == SacctParsable::kNone) {
      out += FixedCell(columns[i], values[i]);
    } else {
      out += values[i].value_or("");
      bool last = i + 1 == columns.size();
      if (!last || options.parsable == SacctParsable::kTrailing) out += options.delimiter;
    }
  }
  return out + "\n";
}

}  // namespace

Result<std::string> FormatSacct(const nlohmann::json& jobs, const SacctOptions& options) {
  std::string format = options.format;
  auto add = [&format](const char* list) { format += (format.empty() ? "" : ",") + std::string(list); };
  if (options.brief) add(kSacctBriefFields);
  if (options.long_format) add(kSacctLongFields);
  if (format.empty()) format = kSacctDefaultFields;
  Result<std::vector<Column>> columns = ParseFields(format);
  if (!columns.ok()) return columns.status();
  Result<std::vector<const nlohmann::json*>> records = Records(jobs, "jobs");
  if (!records.ok()) return records.status();

  std::string out;
  if (!options.noheader) {
    std::vector<std::optional<std::string>> names;
    for (const Column& c : *columns) names.emplace_back(c.field->name);
    if (options.parsable == SacctParsable::kNone) {
      for (const Column& c : *columns) {
        int width = std::abs(c.width);
        out += FitField(std::string(c.field->name).substr(0, static_cast<std::size_t>(width)),
                        width, c.width > 0, true) +
               " ";
      }
      out += "\n";
      for (const Column& c : *columns) out += std::string(std::abs(c.width), '-') + " ";
      out += "\n";
    } else {
      out += Line(*columns, names, options);
    }
  }
  auto print_row = [&](const SacctRow& row) {
    std::vector<std::optional<std::string>> values;
    for (const Column& c : *columns) values.push_back(SacctValue(*c.field, row, options.now));
    out += Line(*columns, values, options);
  };
  for (const nlohmann::json* job : *records) {
    print_row({job, nullptr});
    if (options.allocations) continue;
    auto steps = job->find("steps");
    if (steps == job->end() || !steps->is_array()) continue;
    for (const nlohmann::json& step : *steps) {
      if (!step.is_object()) return InvalidArgument("sacct: a \"steps\" entry is not an object");
      print_row({job, &step});
    }
  }
  return out;
}

}  // namespace lockstep::cli
