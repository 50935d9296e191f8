# The CLI's report formatters: squeue, sinfo, sacct, sprio and scontrol show, as Slurm prints
# them, from the REST API's JSON (docs/api.md). Pure functions; see docs/commands.md.
lockstep_cc_library(NAME lockstep_cli_format FOLDER cli/format
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/field_format.cc
    ${CMAKE_CURRENT_LIST_DIR}/job_view.cc
    ${CMAKE_CURRENT_LIST_DIR}/squeue.cc
    ${CMAKE_CURRENT_LIST_DIR}/squeue_fields.cc
    ${CMAKE_CURRENT_LIST_DIR}/sinfo.cc
    ${CMAKE_CURRENT_LIST_DIR}/sinfo_record.cc
    ${CMAKE_CURRENT_LIST_DIR}/sacct.cc
    ${CMAKE_CURRENT_LIST_DIR}/sacct_fields.cc
    ${CMAKE_CURRENT_LIST_DIR}/sprio.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_follow.cc
    ${CMAKE_CURRENT_LIST_DIR}/sdiag.cc
    ${CMAKE_CURRENT_LIST_DIR}/sshare.cc
    ${CMAKE_CURRENT_LIST_DIR}/event_line.cc
    ${CMAKE_CURRENT_LIST_DIR}/sacctmgr.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_config.cc
    ${CMAKE_CURRENT_LIST_DIR}/reservations.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_config_keys.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_steps.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_topology.cc
    ${CMAKE_CURRENT_LIST_DIR}/sstat.cc
    ${CMAKE_CURRENT_LIST_DIR}/unknown_letters.cc
  DEPS lockstep_common nlohmann_json::nlohmann_json fmt::fmt)

lockstep_cc_test(NAME cli_format_test
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/field_format_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/squeue_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sinfo_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/reservations_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sacct_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sprio_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/escape_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_follow_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sdiag_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sacctmgr_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_config_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_steps_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_topology_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sshare_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sstat_test.cc
  DEPS lockstep_cli_format)
