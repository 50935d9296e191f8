// `squeue --json`, `sinfo --json` and `sacct --json` in Slurm 22.05's schema (the openapi
// plugins v0.0.38 and dbv0.0.38 that Slurm's commands print through), from lockstep's REST API
// objects (docs/api.md). Every key Slurm prints is present, in Slurm's order, with Slurm's value
// types: what lockstep knows is filled in, the rest has the value Slurm prints when unset (0, "",
// [], false or null), so a parser written against Slurm never meets a missing key. The key sets
// were recorded from a real Slurm 22.05.8 (tests/data/slurm_json/) and from dbv0.0.38's parser
// tables for sacct. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// What the API's objects do not say.
struct SlurmJsonContext {
  Time now = 0;
  std::string cluster = "lockstep";  // the ClusterName lockstep reports (sacctmgr's)
  // The name of a group id; empty function or empty answer: the number as text.
  std::function<std::string(std::int64_t gid)> group_name;
};

// {"meta", "errors", "jobs"}: squeue's --json of `jobs` (the API's Job objects, or the
// {"jobs": [...]} envelope). A job that is not an object is an InvalidArgument.
Result<nlohmann::ordered_json> SqueueJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx);

// Receives a document's text piece by piece.
using TextSink = std::function<void(std::string_view)>;

// SqueueJson(jobs, ctx)->dump(2) + '\n', byte for byte, written one job at a time: 100,000 jobs
// never become one document of 111 keys each. The jobs are checked before anything is written.
Status WriteSqueueJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx,
                       const TextSink& write);

// {"meta", "errors", "nodes"}: sinfo's --json of `nodes` (the API's Node objects).
Result<nlohmann::ordered_json> SinfoJson(const nlohmann::json& nodes, const SlurmJsonContext& ctx);

// {"meta", "errors", "jobs"}: sacct's --json of `jobs` (GET /api/v1/accounting), each job with
// its steps (batch and srun steps) in dbv0.0.38's nesting.
Result<nlohmann::ordered_json> SacctJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx);
// SacctJson(jobs, ctx)->dump(2) + '\n', written one job at a time (as WriteSqueueJson).
Status WriteSacctJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx,
                      const TextSink& write);

// Helpers shared by the three (slurm_json_common.cc), exposed for their tests.
namespace slurm_json {

// meta: the plugin ("openapi/v0.0.38" or "openapi/dbv0.0.38") and the Slurm version whose schema
// this is (22.05).
nlohmann::ordered_json Meta(const std::string& plugin_type, const std::string& plugin_name);

// The jobs of an API answer ({"jobs": [...]} or the bare list), each checked to be an object;
// an InvalidArgument names `command` otherwise.
Result<const nlohmann::json*> JobList(const nlohmann::json& jobs, const char* command);

// Writes {"meta": meta, "errors": [], "jobs": [...]} as dump(2) prints it, and a newline: the
// document's head, then each job's object from `job` (indented as inside the document), then
// the tail.
void WriteJobsDocument(const nlohmann::ordered_json& meta, const nlohmann::json& list,
                       const std::function<nlohmann::ordered_json(const nlohmann::json&)>& job,
                       const TextSink& write);

// Sets obj[a][b]... for the path "a/b/...", making the dictionaries on the way in order, as
// Slurm's parser tables do with their "/" keys.
void SetPath(nlohmann::ordered_json& obj, const std::string& path, nlohmann::ordered_json value);

// Memory in MB as Slurm prints it in TRES strings: 500G, 1024M, 2T (the largest unit that
// divides it).
std::string MemoryText(std::int64_t mb);

// "cpu=4,mem=500G,node=1,billing=4,gres/gpu=2": zero counts are left out, as Slurm's are.
std::string TresText(std::int64_t cpus, std::int64_t mem_mb, std::int64_t nodes, std::int64_t gpus);

// The job's array accessors: the pending remainder "[3-10%2]" -> "3-10%2", and its "%N".
std::string ArrayTaskString(const nlohmann::json& job);
std::int64_t ArrayMaxTasks(const nlohmann::json& job);

// Slurm's state reason for a finished job (NonZeroExitCode, TimeLimit, ...), or the job's own.
std::string StateReason(const nlohmann::json& job);

// The job's field as a number (0 when absent or null).
std::int64_t Int(const nlohmann::json& j, const char* key);
// The job's field as text ("" when absent or null).
std::string Str(const nlohmann::json& j, const char* key);

}  // namespace slurm_json

}  // namespace lockstep::cli
