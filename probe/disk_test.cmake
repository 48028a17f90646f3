# disk_test.cmake - the memory-disk section of bspprobe (--only disk) on one back end.
#   MODE=records: bsprun -b BACKEND -n P bspprobe --only disk with files of 4 KiB to 64 KiB,
#     2 repetitions, in WORKDIR; checks the disk_info and disk records (docs/probe-format.md):
#     every op x access x cache for every power of two m, 2 samples > 0 each, the methods;
#     and that the temporary directory is gone afterwards.
#   MODE=errors: each error ends the program with exit status 1 and ONE message that names
#     the path (or the numbers) and the reason, and leaves no temporary directory:
#     --disk-dir that does not exist; --disk-max-bytes above half the free space (1, as every
#     error found while running; a malformed option is 2: --disk-max-bytes 100); with
#     FSIZE_CHECK=1 a write that fails half-way (a file size limit with SIGXFSZ ignored: write
#     returns EFBIG; threads only, because MPI's runtime writes files of its own under it).
#   cmake -DBSPRUN=... -DPROBE=... -DBACKEND=threads -DP=2 -DWORKDIR=dir -DMODE=records
#         -P disk_test.cmake
cmake_minimum_required(VERSION 3.20) # string(JSON), IN_LIST
foreach(var BSPRUN PROBE BACKEND P WORKDIR MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "disk_test.cmake: -D${var}=... is missing")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORKDIR}")
file(MAKE_DIRECTORY "${WORKDIR}")
set(out "${WORKDIR}/disk.jsonl")
set(run "${BSPRUN}" -b ${BACKEND} -n ${P} "${PROBE}" --only disk --output "${out}")

function(check_no_leftover what)
  file(GLOB left "${WORKDIR}/bspprobe-*")
  if(left)
    message(FATAL_ERROR "${what}: the temporary directory is still there: ${left}")
  endif()
endfunction()

if(MODE STREQUAL "errors")
  # expect_error NAME STATUS [PER_PROCESS] MATCH REGEX... COMMAND ...: exit status STATUS,
  # exactly one line with "bspprobe: error" on stderr (PER_PROCESS: one distinct line, which
  # each process may print), matching every REGEX; no temporary directory left.
  function(expect_error name status)
    cmake_parse_arguments(E "PER_PROCESS" "" "MATCH;COMMAND" ${ARGN})
    execute_process(COMMAND ${E_COMMAND} RESULT_VARIABLE rc ERROR_VARIABLE err
                    OUTPUT_VARIABLE o TIMEOUT 60)
    if(NOT rc EQUAL status)
      message(FATAL_ERROR "${name}: exit status '${rc}', expected ${status}:\n${o}\n${err}")
    endif()
    string(REPLACE ";" "," err "${err}") # a semicolon would split the CMake list
    string(REGEX MATCHALL "bspprobe: error[^\n]*" lines "${err}")
    list(LENGTH lines nerr)
    if(E_PER_PROCESS) # an option error: each MPI process parses its own command line
      list(REMOVE_DUPLICATES lines)
      list(LENGTH lines nerr)
    endif()
    if(NOT nerr EQUAL 1)
      message(FATAL_ERROR "${name}: ${nerr} error messages, expected one:\n${err}")
    endif()
    foreach(re IN LISTS E_MATCH)
      if(NOT lines MATCHES "${re}")
        message(FATAL_ERROR "${name}: the message does not match '${re}':\n${lines}")
      endif()
    endforeach()
    check_no_leftover("${name}")
    message(STATUS "${name}: ${lines}")
  endfunction()

  expect_error(missing-dir 1
               MATCH "disk: cannot use the directory '${WORKDIR}/nonexistent/x': No such file"
               COMMAND ${run} --disk-dir "${WORKDIR}/nonexistent/x")

  # 2^44 bytes, the most the option takes, is more than half the free space unless 8 TiB are free
  execute_process(COMMAND df -Pk "${WORKDIR}" OUTPUT_VARIABLE df RESULT_VARIABLE dfrc)
  string(REGEX MATCH "\n[^\n]*" dfline "${df}")
  separate_arguments(dfwords UNIX_COMMAND "${dfline}")
  list(GET dfwords 3 avail_kib)
  if(dfrc EQUAL 0 AND avail_kib LESS 8589934592)
    expect_error(too-large 1
                 MATCH "--disk-max-bytes 17592186044416 is more than half of the free space"
                       "in '${WORKDIR}' \\([0-9]+ bytes free\\), choose at most [0-9]+"
                 COMMAND ${run} --disk-dir "${WORKDIR}" --disk-max-bytes 17592186044416)
  else()
    message(STATUS "too-large: skipped (df says ${avail_kib} KiB free in ${WORKDIR})")
  endif()

  expect_error(too-small 2 PER_PROCESS MATCH "--disk-max-bytes needs an integer from 4096"
               COMMAND ${run} --disk-dir "${WORKDIR}" --disk-max-bytes 100)

  if(FSIZE_CHECK)
    # (newlines, not semicolons, in the shell script: a semicolon would split the CMake list)
    # files up to 1 MiB fit under a 2048-block limit (512 or 1024 bytes per block), 4 MiB not
    expect_error(write-fails 1 MATCH "disk: cannot write '${WORKDIR}/bspprobe-[^/]+/data': File too large"
                 COMMAND sh -c "trap '' XFSZ\nulimit -f 2048\nexec \"$@\"" sh ${run}
                         --disk-dir "${WORKDIR}" --disk-max-bytes 4194304 --reps 1)
  endif()
  file(REMOVE_RECURSE "${WORKDIR}")
  return()
elseif(NOT MODE STREQUAL "records")
  message(FATAL_ERROR "disk_test.cmake: MODE is records or errors, not '${MODE}'")
endif()

execute_process(COMMAND ${run} --disk-max-bytes 65536 --reps 2 --disk-dir "${WORKDIR}"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE o TIMEOUT 100)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bspprobe failed (${rc}):\n${o}\n${err}")
endif()
check_no_leftover("after a run")

include(${CMAKE_CURRENT_LIST_DIR}/jsonl_test_lib.cmake)
read_jsonl("${out}")

jsonl_get(p 0 p)
math(EXPR last "${n} - 1")
jsonl_get(tl ${last} type)
if(NOT p EQUAL P OR NOT tl STREQUAL "footer")
  message(FATAL_ERROR "expected a header at p = ${P} and a footer; got p '${p}', last '${tl}'")
endif()

set(info -1)
set(seen "")
foreach(i RANGE 1 ${last})
  jsonl_get(t ${i} type)
  jsonl_get(rec ${i})
  if(t STREQUAL "disk_info")
    if(NOT info EQUAL -1)
      message(FATAL_ERROR "two disk_info records")
    endif()
    set(info ${i})
    jsonl_get(dir ${i} dir)
    jsonl_get(fs ${i} filesystem)
    jsonl_get(free ${i} free_bytes)
    jsonl_get(max ${i} max_bytes)
    jsonl_get(direct ${i} direct)
    if(NOT dir STREQUAL WORKDIR OR fs STREQUAL "" OR NOT free GREATER 0 OR NOT max EQUAL 65536
       OR NOT direct MATCHES "^(O_DIRECT|fadvise)$")
      message(FATAL_ERROR "bad disk_info: ${rec}")
    endif()
    set(direct_method "fadvise+fsync")
    if(direct STREQUAL "O_DIRECT")
      set(direct_method "O_DIRECT")
    endif()
  elseif(t STREQUAL "disk")
    if(info EQUAL -1)
      message(FATAL_ERROR "a disk record before disk_info: ${rec}")
    endif()
    jsonl_get(op ${i} op)
    jsonl_get(acc ${i} access)
    jsonl_get(cache ${i} cache)
    jsonl_get(method ${i} method)
    jsonl_get(m ${i} bytes)
    jsonl_get(block ${i} block_bytes)
    jsonl_get(reps ${i} reps)
    set(want_method buffered)
    if(cache STREQUAL "direct")
      set(want_method "${direct_method}")
    endif()
    set(want_block ${m})
    if(acc STREQUAL "random")
      set(want_block 4096)
    endif()
    string(JSON ns ERROR_VARIABLE e LENGTH "${doc}" ${i} samples_s)
    if(NOT op MATCHES "^(read|write)$" OR NOT acc MATCHES "^(sequential|random)$"
       OR NOT cache MATCHES "^(page|direct)$" OR NOT method STREQUAL want_method
       OR NOT block EQUAL want_block OR NOT reps EQUAL 2 OR e OR NOT ns EQUAL 2
       OR m LESS 4096 OR m GREATER 65536)
      message(FATAL_ERROR "bad disk record: ${rec}")
    endif()
    foreach(k 0 1)
      jsonl_get(s ${i} samples_s ${k})
      if(NOT s GREATER 0)
        message(FATAL_ERROR "a sample is not > 0: ${rec}")
      endif()
    endforeach()
    set(key "${op}/${acc}/${cache}/${m}")
    if(key IN_LIST seen)
      message(FATAL_ERROR "${key} twice")
    endif()
    list(APPEND seen "${key}")
  elseif(NOT t MATCHES "^(load|footer)$")
    message(FATAL_ERROR "unexpected record ${i} of type '${t}'")
  endif()
endforeach()
if(info EQUAL -1)
  message(FATAL_ERROR "no disk_info record")
endif()
foreach(m 4096 8192 16384 32768 65536)
  foreach(op write read)
    foreach(acc sequential random)
      foreach(cache page direct)
        if(NOT "${op}/${acc}/${cache}/${m}" IN_LIST seen)
          message(FATAL_ERROR "no disk record ${op}/${acc}/${cache} for m = ${m}")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
list(LENGTH seen nseen)
file(REMOVE_RECURSE "${WORKDIR}")
message(STATUS "bspprobe disk test passed on ${BACKEND} at p = ${P}: ${nseen} disk records, "
               "direct: ${direct}")
