// ParseSbatch and ParseSrunArgs: the command line, the script and the environment, read and
// applied in precedence order, then defaults. The pieces live in sbatch_tokens.cc (reading
// options), sbatch_values.cc and sbatch_begin_export.cc (values) and sbatch_apply.cc (building).
#include "jobspec/sbatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "common/utf8.h"
#include "jobspec/sbatch_internal.h"
#include "jobspec/validate.h"

namespace lockstep::jobspec {
namespace {

using sbatch_internal::Mode;
using sbatch_internal::Occurrence;
using sbatch_internal::Opt;
using sbatch_internal::Place;
using sbatch_internal::ResolvePath;
using sbatch_internal::Source;
using sbatch_internal::SpecBuilder;

constexpr std::string_view kNotAScript =
    "This does not look like a batch script. The first line must start with #! followed by the "
    "path to an interpreter. For instance: #!/bin/sh";

std::string Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

const Occurrence* LastOf(const std::vector<Occurrence>& options, Opt id) {
  const Occurrence* found = nullptr;
  for (const Occurrence& o : options) {
    if (o.def->id == id) found = &o;
  }
  return found;
}

// The 1-based line of a byte offset.
std::int64_t LineOf(std::string_view text, std::size_t pos) {
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
}

// Slurm's checks of a batch script before it reads #SBATCH lines (src/sbatch/sbatch.c).
Status CheckScript(std::string_view script, std::string_view file) {
  if (script.empty()) {
    return InvalidArgument(fmt::format("sbatch: {}: the batch script is empty", file));
  }
  if (script.find_first_not_of(" \t\n\r\v\f") == std::string_view::npos) {
    return InvalidArgument(
        fmt::format("sbatch: {}: the batch script contains only whitespace", file));
  }
  if (const std::size_t nul = script.find('\0'); nul != std::string_view::npos) {
    return InvalidArgument(fmt::format(
        "sbatch: {} line {}: the batch script contains a NUL character; is it a binary file?", file,
        LineOf(script, nul)));
  }
  if (const std::size_t cr = script.find("\r\n"); cr != std::string_view::npos) {
    return InvalidArgument(fmt::format(
        "sbatch: {} line {}: the batch script contains DOS line breaks (\\r\\n) instead of UNIX "
        "line breaks (\\n)",
        file, LineOf(script, cr)));
  }
  if (script.substr(0, 2) != "#!") {
    return InvalidArgument(fmt::format("sbatch: {} line 1: {}", file, kNotAScript));
  }
  // Carried as JSON text to the node (validate.h): other bytes would not arrive as written.
  if (const std::optional<std::size_t> at = FirstNonUtf8Byte(script)) {
    return InvalidArgument(
        fmt::format("sbatch: {} line {}: the batch script is not UTF-8 ({}); convert it, e.g. with "
                    "iconv -f LATIN1 -t UTF-8",
                    file, LineOf(script, *at), DescribeNonUtf8(script)));
  }
  return Status::Ok();
}

// The range and product checks of validate.h. lockstepd decides who may give a negative nice.
Status ValidateParsed(std::string_view prog, const JobSpec& spec) {
  Status st = Validate(spec, Limits{.caller_is_operator = true});
  if (st.ok()) return st;
  return Status(st.code(), fmt::format("{}: {}", prog, st.message()));
}

Status ApplyAll(SpecBuilder& builder, const std::vector<Occurrence>& options) {
  for (const Occurrence& o : options) LOCKSTEP_RETURN_IF_ERROR(builder.Apply(o));
  return Status::Ok();
}

// Defaults that do not depend on the script: work_dir and the environment.
Status FinishSpec(SpecBuilder& builder, const std::string& cwd,
                  const std::map<std::string, std::string>& env) {
  JobSpec& spec = builder.spec();
  spec.work_dir = spec.work_dir.empty() ? cwd : ResolvePath(cwd, spec.work_dir);
  if (const auto& file_vars = builder.export_file_vars()) {
    // Applied as --export says, wherever --export-file came in the options.
    Result<std::map<std::string, std::string>> e = sbatch_internal::ExportEnvironment(
        builder.export_given() ? spec.export_mode : "ALL", env, *file_vars);
    if (!e.ok()) return e.status();  // the list was checked when --export was applied
    spec.environment = std::move(*e);
  } else if (!builder.export_given()) {
    spec.environment = env;  // --export=ALL
  }
  return Status::Ok();
}

struct ScriptSource {
  std::string text;
  std::string file;  // for messages and the default name; "stdin" when read from stdin
  std::vector<std::string> args;
  bool from_stdin = false;
};

Result<ScriptSource> LoadScript(const SbatchInput& in, const sbatch_internal::Tokens& tokens) {
  ScriptSource src;
  if (tokens.rest.empty()) {
    if (in.read_stdin) {
      Result<std::string> text = in.read_stdin();
      if (!text.ok()) {
        return Status(text.status().code(),
                      fmt::format("sbatch: unable to read the batch script from stdin: {}",
                                  text.status().message()));
      }
      src.text = std::move(*text);
    } else {
      src.text = in.stdin_script;
    }
    src.file = "stdin";
    src.from_stdin = true;
    return src;
  }
  src.file = tokens.rest.front();
  src.args.assign(tokens.rest.begin() + 1, tokens.rest.end());
  // Like sbatch, a relative script path is found from the command line's --chdir if given.
  std::string base = in.cwd;
  if (const Occurrence* chdir = LastOf(tokens.options, Opt::kChdir); chdir && chdir->value) {
    base = ResolvePath(in.cwd, *chdir->value);
  }
  if (!in.read_file) {
    return FailedPrecondition(fmt::format("sbatch: cannot read '{}': no file reader", src.file));
  }
  Result<std::string> text = in.read_file(ResolvePath(base, src.file));
  if (!text.ok()) {
    return Status(text.status().code(),
                  fmt::format("sbatch: unable to read the batch script '{}': {}", src.file,
                              text.status().message()));
  }
  src.text = std::move(*text);
  return src;
}

// One component of a sbatch submission: its #SBATCH lines, the SBATCH_* variables (every
// component's), then its command-line options.
Result<JobSpec> BuildSbatchComponent(const SbatchInput& in,
                                     const std::vector<Occurrence>& directives,
                                     const std::vector<Occurrence>& options) {
  SpecBuilder builder("sbatch", in.env, in.now);
  builder.SetFileReader(in.cwd, in.read_file);
  LOCKSTEP_RETURN_IF_ERROR(ApplyAll(builder, directives));
  LOCKSTEP_RETURN_IF_ERROR(
      ApplyAll(builder, sbatch_internal::ReadEnvOptions(in.env, Mode::kSbatch)));
  LOCKSTEP_RETURN_IF_ERROR(ApplyAll(builder, options));
  LOCKSTEP_RETURN_IF_ERROR(builder.Check());
  LOCKSTEP_RETURN_IF_ERROR(FinishSpec(builder, in.cwd, in.env));
  return std::move(builder.spec());
}

}  // namespace

Result<JobSpec> ParseSbatch(const SbatchInput& in) {
  // The command line's components (a heterogeneous job's, separated by a lone ":"); the script
  // and its arguments follow the last.
  Result<sbatch_internal::Tokens> tokens =
      sbatch_internal::ReadOptions(in.args, Mode::kSbatch, "sbatch", Place{});
  if (!tokens.ok()) return tokens.status();
  std::vector<std::vector<Occurrence>> arg_groups;
  while (!tokens->rest.empty() && tokens->rest.front() == ":") {
    if (arg_groups.size() + 1 == kMaxHetComponents)
      return InvalidArgument(fmt::format("sbatch: a heterogeneous job has at most {} components",
                                         kMaxHetComponents));
    arg_groups.push_back(std::move(tokens->options));
    std::vector<std::string> next(tokens->rest.begin() + 1, tokens->rest.end());
    tokens = sbatch_internal::ReadOptions(next, Mode::kSbatch, "sbatch", Place{});
    if (!tokens.ok()) return tokens.status();
  }
  arg_groups.push_back(tokens->options);
  // --wrap in any component is the job's script (the first component's, which runs it).
  const bool wrap = std::any_of(arg_groups.begin(), arg_groups.end(), [](const auto& group) {
    return LastOf(group, Opt::kWrap) != nullptr;
  });
  std::vector<std::vector<Occurrence>> directive_groups(1);
  ScriptSource src;
  if (wrap) {
    if (!tokens->rest.empty()) {
      return InvalidArgument(
          fmt::format("sbatch: a script ('{}') and its arguments are not allowed with --wrap",
                      tokens->rest.front()));
    }
  } else {
    tokens->options = arg_groups.front();  // where LoadScript finds -D
    Result<ScriptSource> loaded = LoadScript(in, *tokens);
    if (!loaded.ok()) return loaded.status();
    src = std::move(*loaded);
    LOCKSTEP_RETURN_IF_ERROR(CheckScript(src.text, src.file));
    Result<std::vector<std::vector<Occurrence>>> d =
        sbatch_internal::ReadDirectives(src.text, src.file, "sbatch");
    if (!d.ok()) return d.status();
    directive_groups = std::move(*d);
  }
  if (arg_groups.size() > 1 && directive_groups.size() > 1) {
    return InvalidArgument(fmt::format(
        "sbatch: {}: heterogeneous job components are given both on the command line (':') and "
        "in the script ('#SBATCH hetjob'); give them in one place",
        src.file));
  }
  const std::size_t count = std::max(arg_groups.size(), directive_groups.size());
  std::vector<JobSpec> components;
  for (std::size_t i = 0; i < count; ++i) {
    static const std::vector<Occurrence> kNone;
    Result<JobSpec> spec =
        BuildSbatchComponent(in, i < directive_groups.size() ? directive_groups[i] : kNone,
                             i < arg_groups.size() ? arg_groups[i] : kNone);
    if (!spec.ok()) return spec.status();
    if (i > 0) PropagateHetOptions(components.back(), *spec);
    components.push_back(std::move(*spec));
  }
  JobSpec& spec = components.front();
  for (std::size_t i = 1; i < components.size(); ++i) {
    if (components[i].script.empty()) continue;
    if (spec.script.empty()) spec.script = std::move(components[i].script);
    components[i].script.clear();
  }
  if (!wrap) {
    spec.script = std::move(src.text);
    spec.script_args = std::move(src.args);
  }
  if (spec.name.empty()) {
    spec.name = wrap ? "wrap" : (src.from_stdin ? "sbatch" : Basename(src.file));
  }
  for (std::size_t i = 0; i < components.size(); ++i) {
    LOCKSTEP_RETURN_IF_ERROR(ValidateParsed("sbatch", components[i]));
    if (components.size() > 1 && components[i].array)
      return InvalidArgument("sbatch: --array: a heterogeneous job cannot be a job array");
    if (i > 0 && components[i].name.empty()) components[i].name = components[i - 1].name;
  }
  for (std::size_t i = 1; i < components.size(); ++i)
    spec.het_components.push_back(std::move(components[i]));
  return std::move(spec);
}

Result<SrunParse> ParseSrunArgs(const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env,
                                const std::string& cwd, Time now,
                                const std::function<Result<std::string>(const std::string&)>&
                                    read_file) {
  Result<sbatch_internal::Tokens> tokens =
      sbatch_internal::ReadOptions(args, Mode::kSrun, "srun", Place{});
  if (!tokens.ok()) return tokens.status();
  SpecBuilder builder("srun", env, now);
  builder.SetFileReader(cwd, read_file);
  LOCKSTEP_RETURN_IF_ERROR(ApplyAll(builder, sbatch_internal::ReadEnvOptions(env, Mode::kSrun)));
  LOCKSTEP_RETURN_IF_ERROR(ApplyAll(builder, tokens->options));
  LOCKSTEP_RETURN_IF_ERROR(builder.Check());
  LOCKSTEP_RETURN_IF_ERROR(FinishSpec(builder, cwd, env));
  LOCKSTEP_RETURN_IF_ERROR(ValidateParsed("srun", builder.spec()));
  SrunParse out{std::move(builder.spec()), std::move(tokens->rest), {}};
  for (const Occurrence& o : tokens->options) {
    if (o.def->id == Opt::kSrunOnly)
      out.srun_options[std::string(o.def->long_name)] = o.value.value_or("");
  }
  // The command goes to the nodes in JSON, as the batch script does (validate.h).
  for (std::size_t i = 0; i < out.command.size(); ++i) {
    if (FirstNonUtf8Byte(out.command[i])) {
      return InvalidArgument(fmt::format("srun: word {} of the command is not UTF-8 ({})", i + 1,
                                         DescribeNonUtf8(out.command[i])));
    }
  }
  if (out.spec.name.empty()) {
    out.spec.name = out.command.empty() ? "interactive" : Basename(out.command.front());
  }
  return out;
}

}  // namespace lockstep::jobspec
