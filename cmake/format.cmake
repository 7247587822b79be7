# Runs clang-format over the repository's C++ sources; the `format` and
# `check_format` targets call it (cmake -P), so the list of files is taken
# when the target runs, not when the build was configured.
#   -DCLANG_FORMAT=<path>   the clang-format executable
#   -DSOURCE_DIR=<path>     the repository's top directory
#   -DMODE=fix|check        fix: rewrite the files in place;
#                           check: change nothing, fail on any difference
# The files are what git tracks (*.cpp, *.hpp); outside a git checkout (a
# source archive), every *.cpp and *.hpp under SOURCE_DIR except build
# directories.
cmake_minimum_required(VERSION 3.20)
foreach(var CLANG_FORMAT SOURCE_DIR MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "format.cmake: -D${var}=... is required")
  endif()
endforeach()

set(files "")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" ls-files -- "*.cpp" "*.hpp"
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE listed RESULT_VARIABLE git_rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(git_rc EQUAL 0 AND listed)
    string(REPLACE "\n" ";" files "${listed}")
  endif()
endif()
if(NOT files)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.cpp" "${SOURCE_DIR}/*.hpp")
  list(FILTER files EXCLUDE REGEX "^(build[^/]*|\\.git)/")
endif()
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "format.cmake: no C++ sources found under ${SOURCE_DIR}")
endif()

if(MODE STREQUAL "fix")
  set(args -i)
elseif(MODE STREQUAL "check")
  set(args --dry-run --Werror)
else()
  message(FATAL_ERROR "format.cmake: MODE must be fix or check, not '${MODE}'")
endif()

# Batches of 50 files keep each command line short.
set(failed FALSE)
set(batch "")
set(index 0)
foreach(file IN LISTS files)
  list(APPEND batch "${file}")
  math(EXPR index "${index} + 1")
  list(LENGTH batch batch_size)
  if(batch_size EQUAL 50 OR index EQUAL count)
    execute_process(COMMAND "${CLANG_FORMAT}" --style=file ${args} ${batch}
                    WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(failed TRUE)
    endif()
    set(batch "")
  endif()
endforeach()

if(failed)
  if(MODE STREQUAL "check")
    message(FATAL_ERROR "check_format: the files above differ from .clang-format's layout; "
                        "`cmake --build <dir> --target format` rewrites them")
  endif()
  message(FATAL_ERROR "format: clang-format failed")
endif()
if(MODE STREQUAL "check")
  message(STATUS "check_format: ${count} C++ sources match .clang-format")
else()
  message(STATUS "format: ${count} C++ sources formatted")
endif()
