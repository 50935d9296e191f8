#include "cli/slurm/slurm_options.h"

#include <getopt.h>

#include <cstdio>

namespace lockstep::cli {
namespace {

constexpr int kLongOnlyBase = 256;  // getopt_long's value for long-only option i: base + i
constexpr int kHelp = 10000;
constexpr int kUsage = 10001;

int HasArg(OptArg a) {
  return a == OptArg::kNone ? no_argument
         : a == OptArg::kRequired ? required_argument
                                  : optional_argument;
}

std::string ShortOptString(const std::vector<SlurmOption>& options) {
  std::string s;
  for (const SlurmOption& o : options) {
    if (o.short_name == 0) continue;
    s += o.short_name;
    if (o.arg == OptArg::kRequired) s += ':';
    if (o.arg == OptArg::kOptional) s += "::";
  }
  return s;
}

std::vector<option> LongOptions(const std::vector<SlurmOption>& options) {
  std::vector<option> out;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const SlurmOption& o = options[i];
    int val = o.short_name != 0 ? o.short_name : kLongOnlyBase + static_cast<int>(i);
    out.push_back({o.long_name, HasArg(o.arg), nullptr, val});
  }
  out.push_back({"help", no_argument, nullptr, kHelp});
  out.push_back({"usage", no_argument, nullptr, kUsage});
  out.push_back({nullptr, 0, nullptr, 0});
  return out;
}

const SlurmOption* OptionFor(const std::vector<SlurmOption>& options, int val) {
  if (val >= kLongOnlyBase && val < kLongOnlyBase + static_cast<int>(options.size()))
    return &options[static_cast<std::size_t>(val - kLongOnlyBase)];
  for (const SlurmOption& o : options)
    if (o.short_name != 0 && o.short_name == val) return &o;
  return nullptr;
}

std::string Spelling(const SlurmOption& o) {
  std::string s = o.short_name != 0 ? std::string("-") + o.short_name + ", " : "    ";
  s += std::string("--") + o.long_name;
  if (o.arg == OptArg::kRequired) s += std::string("=") + o.value_name;
  if (o.arg == OptArg::kOptional) s += std::string("[=") + o.value_name + "]";
  return s;
}

}  // namespace

std::string SlurmVersionText() {
  return std::string("slurm 22.05.8 (lockstep ") + LOCKSTEP_VERSION + ")\n";
}

std::string SlurmHelpText(const std::string& command, const std::vector<SlurmOption>& options,
                          const std::string& usage_summary) {
  std::string out = "Usage: " + command + " " + usage_summary + "\n";
  for (const SlurmOption& o : options) {
    if (o.help == nullptr) continue;
    std::string left = "  " + Spelling(o);
    if (left.size() < 34) left.resize(34, ' ');
    else left += "\n" + std::string(34, ' ');
    out += left + o.help + "\n";
  }
  out +=
      "\nHelp options:\n"
      "  --help                          show this help message\n"
      "  --usage                         display a brief summary of " +
      command + " options\n";
  return out;
}

std::string SlurmUsageText(const std::string& command, const std::vector<SlurmOption>& options,
                           const std::string& usage_summary) {
  std::string flags, line = "Usage: " + command;
  const std::string indent(line.size(), ' ');
  std::string out;
  auto add = [&](const std::string& word) {
    if (line.size() + 1 + word.size() > 78) {
      out += line + "\n";
      line = indent;
    }
    line += " " + word;
  };
  for (const SlurmOption& o : options) {
    if (o.help == nullptr) continue;
    if (o.short_name != 0 && o.arg == OptArg::kNone) {
      flags += o.short_name;
      continue;
    }
    std::string name = o.short_name != 0 ? std::string("-") + o.short_name + " "
                                          : std::string("--") + o.long_name + "=";
    add("[" + (o.arg == OptArg::kNone ? std::string("--") + o.long_name
                                      : name + o.value_name) +
        "]");
  }
  if (!flags.empty()) add("[-" + flags + "]");
  add("[--help] [--usage]");
  if (usage_summary != "[OPTIONS]") add(usage_summary.substr(usage_summary.find(']') + 1));
  return out + line + "\n";
}

ParsedCommandLine ParseSlurmCommandLine(const std::string& command, int argc, char** argv,
                                        const std::vector<SlurmOption>& options,
                                        const std::string& usage_summary) {
  ParsedCommandLine parsed;
  // getopt_long names the program by argv[0] in its messages: the command's own name, as Slurm
  // prints it, however lockstep was called (`lockstep squeue`, a symlink, a full path).
  std::vector<char*> args(argv, argv + argc);
  std::string name = command;
  args.push_back(nullptr);
  if (!args.empty()) args[0] = name.data();
  std::vector<option> longs = LongOptions(options);
  std::string shorts = ShortOptString(options);
  optind = 0;  // glibc: a full re-initialization, so a second parse in one process starts afresh
  opterr = 1;
  for (;;) {
    int c = getopt_long(argc, args.data(), shorts.c_str(), longs.data(), nullptr);
    if (c == -1) break;
    if (c == '?' || c == ':') {
      std::fprintf(stderr, "Try \"%s --help\" for more information\n", command.c_str());
      parsed.exit_code = 1;
      return parsed;
    }
    if (c == kHelp || c == kUsage) {
      std::fputs((c == kHelp ? SlurmHelpText(command, options, usage_summary)
                             : SlurmUsageText(command, options, usage_summary))
                     .c_str(),
                 stdout);
      parsed.exit_code = 0;
      return parsed;
    }
    const SlurmOption* o = OptionFor(options, c);
    if (o == nullptr) continue;
    if (std::string(o->long_name) == "version") {
      std::fputs(SlurmVersionText().c_str(), stdout);
      parsed.exit_code = 0;
      return parsed;
    }
    Status st = o->apply(optarg != nullptr ? optarg : "");
    if (!st.ok()) {
      std::fprintf(stderr, "%s: error: %s\n", command.c_str(), st.message().c_str());
      parsed.exit_code = 1;
      return parsed;
    }
  }
  for (int i = optind; i < argc; ++i) parsed.operands.emplace_back(args[static_cast<std::size_t>(i)]);
  return parsed;
}

}  // namespace lockstep::cli
