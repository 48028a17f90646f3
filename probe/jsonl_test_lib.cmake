# jsonl_test_lib.cmake - what the bspprobe test scripts share (include() it):
#   run_probe_ok(OUT TIMEOUT COMMAND...)  runs bspprobe; fails unless it exits 0 and wrote OUT
#   read_jsonl(PATH)                      sets `doc` (a JSON array of the file's records) and
#                                         `n` (their count); fails on an empty file, an empty
#                                         line or a line that is not JSON
#   jsonl_get(OUT INDEX KEY...)           OUT = doc[INDEX][KEY]... ("" when it is not there)
#   jsonl_check_positive(V WHAT)          fails unless V is a positive number as JSON writes it

function(run_probe_ok out timeout)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE text
                  TIMEOUT ${timeout})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bspprobe failed (${rc}):\n${text}\n${err}")
  endif()
  if(NOT EXISTS "${out}")
    message(FATAL_ERROR "bspprobe wrote no file ${out}")
  endif()
endfunction()

# One JSON object per line: join the lines into one JSON array and parse that.
macro(read_jsonl path)
  file(READ "${path}" _jsonl_text)
  string(REGEX REPLACE "\n$" "" _jsonl_text "${_jsonl_text}")
  if(_jsonl_text MATCHES "\n\n" OR _jsonl_text STREQUAL "")
    message(FATAL_ERROR "empty file or empty line in ${path}")
  endif()
  string(REPLACE "\n" "," _jsonl_joined "${_jsonl_text}")
  set(doc "[${_jsonl_joined}]")
  string(JSON n ERROR_VARIABLE _jsonl_err LENGTH "${doc}")
  if(_jsonl_err)
    message(FATAL_ERROR "${path} is not valid JSON lines: ${_jsonl_err}")
  endif()
endmacro()

function(jsonl_get out index)
  string(JSON v ERROR_VARIABLE e GET "${doc}" ${index} ${ARGN})
  if(e)
    set(v "")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# A positive number as bspprobe writes it (%.6g or %.9g), not 0.
function(jsonl_check_positive v what)
  if(NOT v MATCHES "^[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$" OR v MATCHES "^0*\\.?0*([eE].*)?$")
    message(FATAL_ERROR "'${v}' is not a positive number in: ${what}")
  endif()
endfunction()

# OUT = rec[ARGN...] (a key path into one record's JSON text); a missing key fails the test.
function(jsonl_rec_get out rec)
  string(JSON v ERROR_VARIABLE e GET "${rec}" ${ARGN})
  if(e)
    message(FATAL_ERROR "key '${ARGN}' missing in: ${rec}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# OUT = the length of the list rec[ARGN...]; a missing list fails the test.
function(jsonl_rec_len out rec)
  string(JSON v ERROR_VARIABLE e LENGTH "${rec}" ${ARGN})
  if(e)
    message(FATAL_ERROR "no list '${ARGN}' in: ${rec}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# Every sample of rec[ARGN...].samples_s is positive, and there is at least one; OUT = their
# number.
function(jsonl_check_samples out rec)
  jsonl_rec_len(ns "${rec}" ${ARGN} samples_s)
  if(ns LESS 1)
    message(FATAL_ERROR "no samples in '${ARGN}' of: ${rec}")
  endif()
  math(EXPR last "${ns} - 1")
  foreach(s RANGE ${last})
    jsonl_rec_get(v "${rec}" ${ARGN} samples_s ${s})
    jsonl_check_positive("${v}" "'${ARGN}' of ${rec}")
  endforeach()
  set(${out} ${ns} PARENT_SCOPE)
endfunction()
