// sbcast [-CfFjpstv] SOURCE DEST: copies SOURCE to DEST on every node of the job whose
// allocation it runs in (SLURM_JOB_ID), or of -j JOBID[.STEP], as Slurm 22.05's sbcast
// (docs/commands.md "sbcast"). SOURCE is read as the caller; each node writes DEST as the job's
// user (docs/security.md). A relative DEST is relative to sbcast's own directory, as Slurm's
// without BcastParameters=DestDir.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>

#include "cli/bcast_client.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {
namespace {

struct SbcastOptions {
  BroadcastFileRequest request;
  std::string job_text;  // -j as given
  int verbose = 0;
  std::vector<std::string> warnings;
};

// Slurm's -s: bytes, or with a k/m suffix; refused (rather than Slurm's "ignored") when it is
// not a size or beyond Slurm's 32-bit block size.
Result<std::size_t> ParseBlockSize(const std::string& text) {
  const std::string bad = "--size=" + text + ": size specification is invalid (a number of " +
                          "bytes, or with a k or m suffix, below 4 GiB)";
  std::size_t digits = text.find_first_not_of("0123456789");
  if (digits == 0 || text.empty() || (digits == std::string::npos ? text.size() : digits) > 10)
    return InvalidArgument(bad);
  unsigned long long n = std::stoull(text.substr(0, digits));
  if (digits != std::string::npos) {
    const std::string suffix = text.substr(digits);
    if (suffix == "k" || suffix == "K")
      n *= 1024;
    else if (suffix == "m" || suffix == "M")
      n *= 1024 * 1024;
    else
      return InvalidArgument(bad);
  }
  if (n == 0 || n > 0xffffffffULL) return InvalidArgument(bad);
  return static_cast<std::size_t>(n);
}

Result<int> ParseWholeNumber(const std::string& option, const std::string& text, int max) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoi(text) > max)
    return InvalidArgument(option + "=" + text + ": expected a whole number from 0 to " +
                           std::to_string(max));
  return std::stoi(text);
}

// "42" or "42.3": the job, and the step whose nodes get the file (-1: the job's).
struct JobStep {
  unsigned long long job = 0;
  int step = -1;
};
Result<JobStep> ParseJobStep(const std::string& text) {
  const std::size_t dot = text.find('.');
  const std::string job = text.substr(0, dot);
  const std::string step = dot == std::string::npos ? "" : text.substr(dot + 1);
  auto digits = [](const std::string& t, std::size_t max) {
    return !t.empty() && t.size() <= max && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(job, 18) || (dot != std::string::npos && !digits(step, 9)))
    return InvalidArgument("Invalid job id specified: " + text);
  return JobStep{std::stoull(job), dot == std::string::npos ? -1 : std::stoi(step)};
}

// Sets the request's job and step from -j or SLURM_JOB_ID.
Status SetJob(const std::string& text, BroadcastFileRequest& r) {
  Result<JobStep> js = ParseJobStep(text);
  if (!js.ok()) return js.status();
  r.job = js->job;
  r.step = js->step;
  return Status::Ok();
}

// Applies a parsed value to its field: `parse` gives it, or why not.
template <typename T, typename Parse>
std::function<Status(const std::string&)> Into(T& field, Parse parse) {
  return [&field, parse](const std::string& v) {
    auto parsed = parse(v);
    if (!parsed.ok()) return parsed.status();
    field = *parsed;
    return Status::Ok();
  };
}

Status ParseCompress(const std::string& lib) {
  if (lib.empty() || lib == "lz4" || lib == "zlib" || lib == "none") return Status::Ok();
  return InvalidArgument("--compress=" + lib + ": Compression type '" + lib +
                         "' unknown (lz4, zlib or none)");
}

std::vector<SlurmOption> Table(SbcastOptions& o) {
  BroadcastFileRequest& r = o.request;
  auto warn = [&o](const char* spelled) {
    return [&o, spelled](const std::string&) {
      o.warnings.push_back(std::string("sbcast: ") + spelled +
                           " has no effect in lockstep and is ignored");
      return Status::Ok();
    };
  };
  return {
      {"compress", 'C', OptArg::kOptional, ParseCompress, "compress the file being transmitted",
       "lib"},
      {"exclude", 0, OptArg::kRequired, warn("--exclude"), "shared object paths to be excluded",
       "path_list"},
      {"fanout", 'F', OptArg::kRequired,
       [](const std::string& v) { return ParseWholeNumber("--fanout", v, 65533).status(); },
       "specify message fanout", "num"},
      {"force", 'f', OptArg::kNone,
       [&r](const std::string&) {
         r.force = true;
         return Status::Ok();
       },
       "replace destination file as required"},
      {"jobid", 'j', OptArg::kRequired,
       [&o](const std::string& v) {
         o.job_text = v;
         return SetJob(v, o.request);
       },
       "specify job ID with optional step ID", "#[.#]"},
      {"preserve", 'p', OptArg::kNone,
       [&r](const std::string&) {
         r.preserve = true;
         return Status::Ok();
       },
       "preserve modes and times of source file"},
      {"send-libs", 0, OptArg::kOptional, warn("--send-libs"),
       "autodetect and broadcast executable's shared objects", "yes|no"},
      {"size", 's', OptArg::kRequired, Into(r.piece, ParseBlockSize),
       "block size in bytes (rounded off)", "num"},
      {"timeout", 't', OptArg::kRequired,
       Into(r.timeout_s,
            [](const std::string& v) { return ParseWholeNumber("--timeout", v, 600); }),
       "specify message timeout (seconds)", "secs"},
      {"verbose", 'v', OptArg::kNone,
       [&o](const std::string&) {
         ++o.verbose;
         return Status::Ok();
       },
       "provide detailed event logging"},
      {"version", 'V', OptArg::kNone, [](const std::string&) { return Status::Ok(); },
       "print version information and exit"},
  };
}

void PrintOptions(const BroadcastFileRequest& r) {
  std::fprintf(stderr,
               "sbcast: -----------------------------\n"
               "sbcast: block_size = %zu\nsbcast: force      = %s\n"
               "sbcast: preserve   = %s\nsbcast: timeout    = %d\n"
               "sbcast: source     = %s\nsbcast: dest       = %s\n"
               "sbcast: jobid      = %llu%s\n"
               "sbcast: -----------------------------\n",
               std::clamp(r.piece, kMinBroadcastPiece, kMaxBroadcastPiece),
               r.force ? "true" : "false", r.preserve ? "true" : "false", r.timeout_s * 1000,
               r.source.c_str(), r.dest.c_str(), r.job,
               r.step >= 0 ? ("." + std::to_string(r.step)).c_str() : "");
}

}  // namespace

int RunSbcast(int argc, char** argv) {
  SbcastOptions o;
  const std::vector<SlurmOption> table = Table(o);
  ParsedCommandLine cl =
      ParseSlurmCommandLine("sbcast", argc, argv, table, "[OPTIONS] SOURCE DEST");
  if (cl.exit_code) return *cl.exit_code;
  PrintOptionWarnings(o.warnings);
  if (cl.operands.size() != 2) {
    std::fprintf(stderr, "Need two file names, have %zu names\n", cl.operands.size());
    std::fprintf(stderr, "Try \"sbcast --help\" for more information\n");
    return 1;
  }
  BroadcastFileRequest& r = o.request;
  if (o.job_text.empty()) {
    const char* env = std::getenv("SLURM_JOB_ID");
    if (!env || !*env)
      return Fail("sbcast",
                  "Need a job id to run this command.  Run from within a Slurm job or use the "
                  "--jobid option.");
    if (Status s = SetJob(env, r); !s.ok()) return Fail("sbcast", s);
  }
  r.source = cl.operands[0];
  const std::string& dest = cl.operands[1];
  r.dest = !dest.empty() && dest[0] == '/' ? dest : CurrentDir() + "/" + dest;
  if (r.dest.back() == '/') return Fail("sbcast", "Target filename cannot be a directory.");
  if (o.verbose) PrintOptions(r);
  client::ApiClient api;
  Status s = SendFileToJob(api, r, "sbcast");
  if (s.ok()) return 0;
  if (NodesFailed(s)) return 1;  // each node's line is printed
  return Fail("sbcast", s);
}

}  // namespace lockstep::cli
