# Slurm's command-line conventions for the CLI: getopt_long option tables with Slurm's messages
# and exit codes, job and node filters, -O formats. Pure functions; see docs/commands.md.
lockstep_cc_library(NAME lockstep_cli_slurm FOLDER cli/slurm
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/slurm_options.cc
    ${CMAKE_CURRENT_LIST_DIR}/job_filter.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_filter.cc
    ${CMAKE_CURRENT_LIST_DIR}/long_format.cc
    ${CMAKE_CURRENT_LIST_DIR}/multi_prog.cc
  DEPS lockstep_common nlohmann_json::nlohmann_json)

lockstep_cc_test(NAME cli_slurm_test
  SRCS
    ${CMAKE_CURRENT_LIST_DIR}/slurm_options_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/job_filter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_filter_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/long_format_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/multi_prog_test.cc
  DEPS lockstep_cli_slurm)
target_compile_definitions(lockstep_cli_slurm PRIVATE LOCKSTEP_VERSION="${PROJECT_VERSION}")
