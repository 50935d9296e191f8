// Options that name files: -F/--nodefile and -w FILE (the node list), --export-file (the
// job's variables). The parser stays pure: files come through the FileReader it was given.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/hostlist.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Slurm's --export-file takes a file descriptor from 3 up as well as a file name.
std::string ExportFilePath(const std::string& value) {
  const bool digits =
      !value.empty() && value.size() <= 9 && std::all_of(value.begin(), value.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
  if (digits && std::stoi(value) >= 3) return "/dev/fd/" + value;
  return value;
}

}  // namespace

std::string ResolvePath(const std::string& base, const std::string& path) {
  std::filesystem::path p(path);
  if (!p.is_absolute()) p = std::filesystem::path(base) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Result<std::string> ParseNodeFile(std::string_view text) {
  // Words at blanks and at commas outside brackets ("gpu[01,03]" stays one), comments dropped.
  std::vector<std::string> words(1);
  int depth = 0;
  bool comment = false;
  for (char c : text) {
    if (comment) {
      comment = c != '\n';
      if (!comment) words.emplace_back();
      continue;
    }
    if (c == '#') {
      comment = true;
    } else if (IsBlank(c) || (c == ',' && depth == 0)) {
      words.emplace_back();
    } else {
      depth += c == '[' ? 1 : (c == ']' ? -1 : 0);
      words.back() += c;
    }
  }
  std::vector<std::string> hosts;
  for (const std::string& w : words) {
    if (w.empty()) continue;
    Result<std::vector<std::string>> expanded = ExpandHostlist(w);
    if (!expanded.ok()) return InvalidArgument(expanded.status().message());
    hosts.insert(hosts.end(), expanded->begin(), expanded->end());
  }
  if (hosts.empty()) return InvalidArgument("names no node");
  return CompressHostlist(hosts);
}

Result<std::map<std::string, std::string>> ParseExportFile(std::string_view text) {
  const char separator = text.find('\0') != std::string_view::npos ? '\0' : '\n';
  std::map<std::string, std::string> vars;
  int entry = 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    ++entry;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || !IsVarName(item.substr(0, eq))) {
      return InvalidArgument(
          fmt::format("{} {} is not NAME=value", separator == '\n' ? "line" : "entry", entry));
    }
    vars[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
  }
  return vars;
}

void SpecBuilder::SetFileReader(std::string cwd, FileReader read_file) {
  cwd_ = std::move(cwd);
  read_file_ = std::move(read_file);
}

Result<std::string> SpecBuilder::ReadNamedFile(const Occurrence& occ,
                                               const std::string& path) const {
  if (!read_file_) return OptionError(prog_, occ, "files cannot be read here");
  Result<std::string> text = read_file_(ResolvePath(cwd_, path));
  // The reader's message names the file ("unable to open file /work/nodes").
  if (!text.ok()) return OptionError(prog_, occ, text.status().message());
  return text;
}

Status SpecBuilder::ApplyNodes(const Occurrence& occ, const std::string& v) {
  const Opt id = occ.def->id;
  // Slurm reads a -w value that contains a '/' as a node file, as -F's.
  if (id == Opt::kNodefile || (id == Opt::kNodelist && v.find('/') != std::string::npos)) {
    Result<std::string> text = ReadNamedFile(occ, v);
    if (!text.ok()) return text.status();
    Result<std::string> hosts = ParseNodeFile(*text);
    if (!hosts.ok()) {
      return OptionError(prog_, occ, fmt::format("'{}' {}", v, hosts.status().message()));
    }
    spec_.nodelist = std::move(*hosts);
    return Status::Ok();
  }
  // The names are checked against the cluster at submission; the syntax here.
  auto hosts = ExpandHostlist(v);
  if (!hosts.ok()) return OptionError(prog_, occ, hosts.status().message());
  (id == Opt::kNodelist ? spec_.nodelist : spec_.exclude) = CompressHostlist(*hosts);
  return Status::Ok();
}

Status SpecBuilder::ApplyExportFile(const Occurrence& occ, const std::string& v) {
  Result<std::string> text = ReadNamedFile(occ, ExportFilePath(v));
  if (!text.ok()) return text.status();
  Result<std::map<std::string, std::string>> vars = ParseExportFile(*text);
  if (!vars.ok()) {
    return OptionError(prog_, occ, fmt::format("'{}' {}", v, vars.status().message()));
  }
  export_file_vars_ = std::move(*vars);
  return Status::Ok();
}

}  // namespace lockstep::jobspec::sbatch_internal
