#include "cli/format/reservations.h"

#include <fmt/format.h>

#include "cli/format/field_format.h"
#include "common/duration.h"

namespace lockstep::cli {
namespace {

std::string Str(const nlohmann::json& r, const char* key) {
  const nlohmann::json* v = r.contains(key) ? &r[key] : nullptr;
  return v && v->is_string() ? v->get<std::string>() : "";
}

std::string OrNull(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string Names(const nlohmann::json& r, const char* key) {
  std::string out;
  if (r.contains(key) && r[key].is_array())
    for (const nlohmann::json& n : r[key])
      if (n.is_string()) out += (out.empty() ? "" : ",") + n.get<std::string>();
  return out;
}

std::int64_t Int(const nlohmann::json& r, const char* key) {
  return r.contains(key) && r[key].is_number_integer() ? r[key].get<std::int64_t>() : 0;
}

// EndTime and Duration; an infinite reservation has neither.
std::string EndText(const nlohmann::json& r) {
  return r.contains("end_time") && r["end_time"].is_number_integer()
             ? TimeStamp(r["end_time"].get<Time>())
             : "Unknown";
}
std::string DurationText(const nlohmann::json& r) {
  return r.contains("duration") && r["duration"].is_number_integer()
             ? FormatSlurmSpan(r["duration"].get<Seconds>())
             : "UNLIMITED";
}

std::string Record(const nlohmann::json& r) {
  const std::int64_t cpus = Int(r, "cpu_count");
  return fmt::format(
      "ReservationName={} StartTime={} EndTime={} Duration={}\n"
      "   Nodes={} NodeCnt={} CoreCnt={} Features=(null) PartitionName={} Flags={}\n"
      "   TRES=cpu={}\n"
      "   Users={} Groups=(null) Accounts={} Licenses=(null) State={} BurstBuffer=(null) "
      "Watts=n/a\n"
      "   MaxStartDelay=(null)\n\n",
      Str(r, "name"), TimeStamp(Int(r, "start_time")), EndText(r), DurationText(r),
      OrNull(Str(r, "nodes")), Int(r, "node_count"), cpus, OrNull(Str(r, "partition")),
      Str(r, "flags"), cpus, OrNull(Names(r, "users")), OrNull(Names(r, "accounts")),
      Str(r, "state"));
}

}  // namespace

std::string FormatScontrolShowReservations(const nlohmann::json& reservations,
                                           const std::string& name) {
  std::string out;
  for (const nlohmann::json& r : reservations)
    if (name.empty() || Str(r, "name") == name) out += Record(r);
  if (!out.empty()) return out;
  return name.empty() ? "No reservations in the system\n" : "Reservation " + name + " not found\n";
}

std::string FormatSinfoReservations(const nlohmann::json& reservations) {
  if (reservations.empty()) return "No reservations in the system\n";
  auto row = [](const std::string& name, const std::string& state, const std::string& start,
                const std::string& end, const std::string& duration, const std::string& nodes) {
    // Slurm truncates a value to its column's width.
    return fmt::format("{:<10.10} {:>8.8}  {:>19.19}  {:>19.19}  {:>11.11}  {}\n", name, state,
                       start, end, duration, nodes);
  };
  std::string out = row("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  for (const nlohmann::json& r : reservations)
    out += row(Str(r, "name"), Str(r, "state"), TimeStamp(Int(r, "start_time")), EndText(r),
               DurationText(r), Str(r, "nodes"));
  return out;
}

}  // namespace lockstep::cli
