// Reading options from command lines, #SBATCH lines and the environment.
#include <fmt/format.h>

#include <cctype>
#include <string>
#include <utility>

#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

bool Enabled(const OptionDef& d, Mode mode) {
  return mode == Mode::kSbatch ? !d.srun_only : !d.sbatch_only;
}

// Finds a long option by exact name or unique prefix (getopt_long's rule).
Result<const OptionDef*> FindLong(std::string_view name, Mode mode) {
  std::vector<const OptionDef*> matches;
  for (const OptionDef& d : OptionTable()) {
    if (d.long_name.empty() || !Enabled(d, mode)) continue;
    if (d.long_name == name) return &d;
    if (!name.empty() && d.long_name.substr(0, name.size()) == name) matches.push_back(&d);
  }
  if (matches.size() == 1) return matches[0];
  if (matches.empty()) return InvalidArgument(fmt::format("unrecognized option '--{}'", name));
  std::string names;
  for (const OptionDef* d : matches) names += fmt::format(" '--{}'", d->long_name);
  return InvalidArgument(fmt::format("option '--{}' is ambiguous; possibilities:{}", name, names));
}

const OptionDef* FindShort(char c, Mode mode) {
  for (const OptionDef& d : OptionTable()) {
    if (d.short_name == c && Enabled(d, mode)) return &d;
  }
  return nullptr;
}

Status TokenError(std::string_view prog, const Place& place, std::string_view message) {
  return InvalidArgument(fmt::format("{}{}{}", Prefix(prog, place),
                                     place.source == Source::kScript ? "#SBATCH: " : "", message));
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f';
}

}  // namespace

Result<Tokens> ReadOptions(const std::vector<std::string>& words, Mode mode, std::string_view prog,
                           const Place& place) {
  Tokens out;
  std::size_t i = 0;
  auto take_next = [&](std::string_view spelled) -> Result<std::string> {
    if (i + 1 >= words.size()) {
      return TokenError(prog, place, fmt::format("option '{}' requires an argument", spelled));
    }
    return words[++i];
  };
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    if (w[1] == '-') {
      const std::size_t eq = w.find('=');
      const std::string_view name =
          std::string_view(w).substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      Result<const OptionDef*> def = FindLong(name, mode);
      if (!def.ok()) return TokenError(prog, place, def.status().message());
      Occurrence occ{*def, fmt::format("--{}", (*def)->long_name), std::nullopt, place};
      if (eq != std::string::npos) {
        if ((*def)->arg == ArgKind::kNone) {
          return TokenError(prog, place,
                            fmt::format("option '{}' doesn't allow an argument", occ.spelled));
        }
        occ.value = w.substr(eq + 1);
      } else if ((*def)->arg == ArgKind::kRequired) {
        Result<std::string> v = take_next(occ.spelled);
        if (!v.ok()) return v.status();
        occ.value = *v;
      }
      out.options.push_back(std::move(occ));
      continue;
    }
    for (std::size_t j = 1; j < w.size(); ++j) {
      const OptionDef* def = FindShort(w[j], mode);
      if (def == nullptr) {
        return TokenError(prog, place, fmt::format("unrecognized option '-{}'", w[j]));
      }
      Occurrence occ{def, fmt::format("-{}", w[j]), std::nullopt, place};
      const bool attached = j + 1 < w.size();
      if (def->arg == ArgKind::kNone) {
        out.options.push_back(std::move(occ));
        continue;
      }
      if (attached) {
        occ.value = w.substr(j + 1);
      } else if (def->arg == ArgKind::kRequired) {
        Result<std::string> v = take_next(occ.spelled);
        if (!v.ok()) return v.status();
        occ.value = *v;
      }
      out.options.push_back(std::move(occ));
      break;
    }
  }
  out.rest.assign(words.begin() + static_cast<std::ptrdiff_t>(std::min(i, words.size())),
                  words.end());
  return out;
}

Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsBlank(c) || c == '\r') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    if (!in_word && c == '#') break;  // a comment
    in_word = true;
    if (c == '\\') {
      if (i + 1 < text.size()) cur += text[++i];
    } else if (c == '\'' || c == '"') {
      const std::size_t close = text.find(c, i + 1);
      if (close == std::string_view::npos) {
        return InvalidArgument(
            fmt::format("unterminated {} quote", c == '"' ? "double" : "single"));
      }
      for (std::size_t k = i + 1; k < close; ++k) {
        // Inside double quotes a backslash escapes only \ and ", as in a shell.
        if (c == '"' && text[k] == '\\' && k + 1 < close &&
            (text[k + 1] == '\\' || text[k + 1] == '"'))
          ++k;
        cur += text[k];
      }
      i = close;
    } else {
      cur += c;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

Result<std::vector<std::vector<Occurrence>>> ReadDirectives(std::string_view script,
                                                            std::string_view file,
                                                            std::string_view prog) {
  constexpr std::string_view kMagic = "#SBATCH";
  std::vector<std::vector<Occurrence>> groups(1);
  int number = 0;
  std::size_t pos = 0;
  while (pos < script.size()) {
    std::size_t end = script.find('\n', pos);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    const Place place{Source::kScript, std::string(file), number};
    if (line.substr(0, kMagic.size()) == kMagic &&
        (line.size() == kMagic.size() || IsBlank(line[kMagic.size()]))) {
      Result<std::vector<std::string>> words = SplitDirectiveWords(line.substr(kMagic.size()));
      if (!words.ok()) return TokenError(prog, place, words.status().message());
      // "#SBATCH hetjob" (Slurm 17.11's "packjob" too): the next component's options follow.
      if (words->size() == 1 && ((*words)[0] == "hetjob" || (*words)[0] == "packjob")) {
        if (groups.size() == kMaxHetComponents)
          return TokenError(prog, place,
                            fmt::format("a heterogeneous job has at most {} components",
                                        kMaxHetComponents));
        groups.emplace_back();
        continue;
      }
      Result<Tokens> tokens = ReadOptions(*words, Mode::kSbatch, prog, place);
      if (!tokens.ok()) return tokens.status();
      if (!tokens->rest.empty()) {
        return TokenError(prog, place,
                          fmt::format("unexpected argument '{}'", tokens->rest.front()));
      }
      for (Occurrence& o : tokens->options) groups.back().push_back(std::move(o));
      continue;
    }
    std::size_t k = 0;
    while (k < line.size() && (IsBlank(line[k]) || line[k] == '\r')) ++k;
    if (k == line.size() || line[k] == '#') continue;  // blank or a comment
    break;                                             // the first command: stop
  }
  return groups;
}

std::vector<Occurrence> ReadEnvOptions(const std::map<std::string, std::string>& env, Mode mode) {
  struct EnvOption {
    std::string_view var;
    Opt id;
  };
  static constexpr EnvOption kSbatch[] = {
      {"SBATCH_JOB_NAME", Opt::kJobName},
      {"SBATCH_PARTITION", Opt::kPartition},
      {"SBATCH_ACCOUNT", Opt::kAccount},
      {"SBATCH_QOS", Opt::kQos},
      {"SBATCH_TIMELIMIT", Opt::kTime},
      {"SBATCH_EXPORT", Opt::kExport},
      {"SBATCH_MEM_PER_NODE", Opt::kMem},
      {"SBATCH_MEM_PER_CPU", Opt::kMemPerCpu},
      {"SBATCH_MEM_PER_GPU", Opt::kMemPerGpu},
      {"SBATCH_GPUS", Opt::kGpus},
      {"SBATCH_GPUS_PER_NODE", Opt::kGpusPerNode},
      {"SBATCH_GPUS_PER_TASK", Opt::kGpusPerTask},
      {"SBATCH_GRES", Opt::kGres},
      {"SBATCH_CPUS_PER_GPU", Opt::kCpusPerGpu},
      {"SBATCH_EXCLUSIVE", Opt::kExclusive},
      {"SBATCH_REQUEUE", Opt::kRequeue},
      {"SBATCH_NO_REQUEUE", Opt::kNoRequeue},
      {"SBATCH_OUTPUT", Opt::kOutput},
      {"SBATCH_ERROR", Opt::kError},
      {"SBATCH_ARRAY_INX", Opt::kArray},
      {"SBATCH_CONSTRAINT", Opt::kConstraint},
      {"SBATCH_EXCLUDE", Opt::kExclude},
      {"SBATCH_REQ_SWITCH", Opt::kSwitches},
      {"SBATCH_WAIT4SWITCH", Opt::kSwitchesWait},
  };
  static constexpr EnvOption kSrun[] = {
      {"SLURM_ACCOUNT", Opt::kAccount},   {"SLURM_PARTITION", Opt::kPartition},
      {"SLURM_QOS", Opt::kQos},           {"SLURM_TIMELIMIT", Opt::kTime},
      {"SLURM_EXPORT_ENV", Opt::kExport},
  };
  std::vector<Occurrence> out;
  auto read = [&](const auto& list) {
    for (const EnvOption& e : list) {
      auto it = env.find(std::string(e.var));
      if (it == env.end()) continue;
      const OptionDef& def = DefFor(e.id);
      Occurrence occ{&def, std::string(e.var), std::nullopt, Place{Source::kEnv, "", 0}};
      if (def.arg != ArgKind::kNone && e.id != Opt::kExclusive) {
        if (it->second.empty()) continue;
        occ.value = it->second;
      }
      out.push_back(std::move(occ));
    }
  };
  if (mode == Mode::kSbatch) {
    read(kSbatch);
  } else {
    read(kSrun);
  }
  return out;
}

}  // namespace lockstep::jobspec::sbatch_internal
