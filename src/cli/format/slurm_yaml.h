// `--yaml` of squeue, sinfo and sacct: the document of their --json (slurm_json.h) as YAML, laid
// out as Slurm 22.05's commands print it through libyaml: "%YAML 1.1", "--- !!map", every node
// with its explicit tag (!!map, !!seq, !!str, !!int, !!float, !!bool, !!null), a sequence in a
// mapping at its key's indentation, empty collections as "!!seq []" and "!!map {}", and "..."
// at the end. Strings are plain when plain text cannot be misread, else double-quoted with
// escapes (where libyaml sometimes chooses single quotes: the same value). A hand-written
// emitter, so that lockstep-slurm stays free of a YAML library; its test parses the output back
// with yaml-cpp and compares it with the JSON. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::cli {

// The YAML text of `doc` (any JSON value; Slurm's documents are objects), ending in "...\n".
std::string SlurmYaml(const nlohmann::ordered_json& doc);

namespace slurm_yaml {
// A string as a YAML scalar (without its tag): plain, or double-quoted. Exposed for its test.
std::string Scalar(const std::string& text);
}  // namespace slurm_yaml

}  // namespace lockstep::cli
