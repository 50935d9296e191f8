# sbatch and srun options, #SBATCH scripts, output filename patterns and JobSpec JSON.
list(APPEND SPEC_SRCS
  ${CMAKE_CURRENT_SOURCE_DIR}/job_spec_json.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/output_pattern.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_apply.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_begin_export.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_option_table.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_tokens.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_values.cc)
list(APPEND SPEC_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/job_spec_json_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/output_pattern_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_script_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sbatch_values_test.cc)
