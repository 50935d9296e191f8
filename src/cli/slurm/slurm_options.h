// Command lines read as Slurm's commands read them: glibc's getopt_long over a table of options,
// so that unique prefixes of long names (`squeue --noh`), option permutation, `--opt=value`,
// grouped short flags (`-hl`) and the messages and exit codes of bad options are Slurm's own:
//
//   squeue: unrecognized option '--bogus'
//   Try "squeue --help" for more information           (exit 1)
//
// `--help` prints the table; `--usage` one line of every option; an option named "version" prints
// SlurmVersionText() and stops, as Slurm's -V does. Not thread-safe (getopt_long
// keeps global state): call from main's thread only, one parse at a time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::cli {

enum class OptArg { kNone, kRequired, kOptional };

struct SlurmOption {
  const char* long_name;  // without "--"; never empty
  char short_name;        // 0: none
  OptArg arg;
  // Called for each occurrence, in command-line order, with the value ("" for a flag or an
  // optional argument not given). An error is printed as "<command>: error: <message>".
  std::function<Status(const std::string& value)> apply;
  const char* help;  // one line for --help; nullptr: accepted but not listed
  const char* value_name = "value";
};

struct ParsedCommandLine {
  std::vector<std::string> operands;  // the words that are not options, in order
  // Set when the command must stop now (help printed, or a bad option reported): the exit code.
  std::optional<int> exit_code;
};

// Parses argv[1..argc) for `command` (squeue, sinfo, ...). `usage_summary` follows "Usage:
// <command> " in --help and --usage (e.g. "[OPTIONS] [job_id...]").
ParsedCommandLine ParseSlurmCommandLine(const std::string& command, int argc, char** argv,
                                        const std::vector<SlurmOption>& options,
                                        const std::string& usage_summary = "[OPTIONS]");

// What -V/--version prints, on every command: the Slurm release whose command lines lockstep
// speaks (tools read "slurm 22.05"), then lockstep's own version.
std::string SlurmVersionText();

// The text of --help for `options` (what ParseSlurmCommandLine prints), for golden tests.
std::string SlurmHelpText(const std::string& command, const std::vector<SlurmOption>& options,
                          const std::string& usage_summary);
std::string SlurmUsageText(const std::string& command, const std::vector<SlurmOption>& options,
                           const std::string& usage_summary);

}  // namespace lockstep::cli
