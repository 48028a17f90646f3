# bspalg-oocmm (helpers: tests/algorithms/CMakeLists.txt). Every run goes through
# in_fresh_dir.sh, which gives it a fresh --dir and passes only when the exit status and
# message are the expected ones and the driver left nothing behind in that directory.
set(OOCMM_IN_FRESH_DIR ${CMAKE_CURRENT_LIST_DIR}/in_fresh_dir.sh)

# oocmm_test(CASE STATUS REGEX PROCS "p ..." ARGS ...): alg.oocmm.<CASE>.<backend>.p<P> on
# every back end; STATUS 0 runs the check against the inputs (C read back from the files, and
# every process' read and write calls against their closed form).
function(oocmm_test case status regex)
  cmake_parse_arguments(T "" "" "PROCS;ARGS" ${ARGN})
  foreach(backend IN LISTS BSPKIT_TEST_BACKENDS)
    foreach(p IN LISTS T_PROCS)
      set(test alg.oocmm.${case}.${backend}.p${p})
      add_test(NAME ${test} COMMAND sh ${OOCMM_IN_FRESH_DIR} ${status} "${regex}" ${BSPRUN} -b ${backend}
                                    -n ${p} $<TARGET_FILE:bspalg-oocmm> ${T_ARGS})
      if(status EQUAL 0)
        set(labels "bsp;algorithms;${backend};oocmm")
      else()
        set(labels "algorithms;errors;oocmm;${backend}")
      endif()
      set_tests_properties(${test} PROPERTIES TIMEOUT 70 LABELS "${labels}")
      if(status EQUAL 0) # a correct run: the first case is the smoke test, the rest a sweep
        set(BSPALG_CASE ${case})
        bspalg_quick_p("${T_PROCS}" BSPALG_QUICK_P)
        bspalg_tier(${test} ${backend} ${p})
      endif()
    endforeach()
  endforeach()
endfunction()

# --memory 32768 streams several panels and blocks from n = 64 on (n = 100: w = 16, r = 15 at
# p = 1, 7 panels and 7 blocks); n = 1 and 7 leave processes without rows at p = 2, 3.
foreach(n IN ITEMS 1 7 64 100)
  foreach(io IN ITEMS direct page)
    oocmm_test(n${n}.${io} 0 "" PROCS 1 2 3 ARGS --size ${n} --memory 32768 --io ${io} -r 2)
  endforeach()
endforeach()
# The fadvise way around the page cache; calls of one 4096-byte chunk each; the smallest
# budget for n = 100 (12288 bytes: 5-column panels, 5-row blocks, 20 x 7 tiles at p = 3).
oocmm_test(n100.fadvise 0 "" PROCS 1 3 ARGS --size 100 --memory 32768 --io fadvise -r 2)
oocmm_test(n100.chunk4096 0 "" PROCS 1 3 ARGS --size 100 --memory 32768 --chunk 4096 -r 1)
oocmm_test(n100.smallest.budget 0 "" PROCS 2 3 ARGS --size 100 --memory 12288 --io page -r 1
           --seed 5)
oocmm_test(n64.measure-f 0 "" PROCS 2 ARGS --size 64 --memory 32768 --measure-f -r 1)

# A full disk, made by --max-file-bytes: while the inputs are written (B's 20 panels of 4096
# bytes pass 51200), while C is (tile 50 passes 204800), and on process 1 alone (n = 91 at
# p = 2: process 1's 10 blocks pass 720896 bytes of C, process 0's 9 do not). Exit status 1, the
# failure named once, every process' files removed.
oocmm_test(full.disk.inputs 1 "bspalg-oocmm: writing B.0 \\(process 0, .*failed: .*every process' files were removed"
           PROCS 1 3 ARGS --size 100 --memory 12288 --max-file-bytes 51200 -r 1)
oocmm_test(full.disk.output 1 "bspalg-oocmm: writing C.0 \\(process 0, .*failed: File too large"
           PROCS 1 3 ARGS --size 100 --memory 12288 --max-file-bytes 204800 -r 1)
oocmm_test(full.disk.process1 1 "bspalg-oocmm: writing C.1 \\(process 1, .*failed: File too large"
           PROCS 2 ARGS --size 91 --memory 12288 --max-file-bytes 720896 -r 1)

# A --dir where no directory can be made: one message, exit status 1, on every back end.
foreach(backend IN LISTS BSPKIT_TEST_BACKENDS)
  foreach(p IN ITEMS 1 3)
    set(test alg.oocmm.dir-missing.${backend}.p${p})
    add_test(NAME ${test}
             COMMAND ${EXPECT_FAILURE} 30 1
                     "bspalg-oocmm: cannot create a directory in /nonexistent/oocmm: No such file or directory"
                     ${BSPRUN} -b ${backend} -n ${p} $<TARGET_FILE:bspalg-oocmm> --size 10 --dir
                     /nonexistent/oocmm)
    set_tests_properties(${test} PROPERTIES TIMEOUT 40 LABELS "algorithms;errors;oocmm;${backend}")
  endforeach()
endforeach()
add_test(NAME alg.oocmm.dir-is-a-file
         COMMAND ${EXPECT_FAILURE} 30 1
                 "bspalg-oocmm: cannot create a directory in ${CMAKE_CURRENT_LIST_FILE}: Not a directory"
                 ${BSPRUN} -n 2 $<TARGET_FILE:bspalg-oocmm> --size 10 --dir ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(alg.oocmm.dir-is-a-file PROPERTIES TIMEOUT 40 LABELS "algorithms;errors;oocmm")

bspalg_error_test(memory-too-small
                  EXPECT "--memory 12287 is too small for n = 100: .* need --memory 12288 or more"
                  ARGS --size 100 --memory 12287)
bspalg_error_test(bad-io EXPECT "--io must be direct, fadvise or page, not 'disk'" ARGS --io disk)
bspalg_error_test(bad-chunk EXPECT "--chunk must be a multiple of 4096 .*not 5000" ARGS --chunk 5000)

# Not enough space for the files (B alone is 8 TB at n = 1000000): refused before any is written.
oocmm_test(no-space 1 "bspalg-oocmm: not enough space in .*: the files need .* GiB are free"
           PROCS 2 ARGS --size 1000000 --memory 16011264 -r 1)
# Ended by SIGTERM (a timeout, Ctrl-C) while it runs: the files are removed all the same.
oocmm_test(sigterm term "" PROCS 1 3 ARGS --size 600 --memory 65536 -r 1000 --no-check)
