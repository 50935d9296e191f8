// squeue's and sinfo's -O/--Format ("JobID,Name:30,State:.10") as the %-letter formats that
// src/cli/format prints: each field "type[:[.][size]]", 20 characters wide unless sized, '.'
// right-justifies (squeue(1), sinfo(1)). Pure; thread-safe.
#pragma once

#include <string>

#include "common/status.h"

namespace lockstep::cli {

// "JobID,Name:30" -> "%20A%30j". An unknown type is "Invalid job format specification: <type>".
Result<std::string> SqueueLongFormat(const std::string& spec);
// "NodeList,StateLong" -> "%20N%20T". An unknown type is "Invalid node format specification:
// <type>".
Result<std::string> SinfoLongFormat(const std::string& spec);

}  // namespace lockstep::cli
