# bspalg-toy against the sequential scan (helpers: tests/algorithms/CMakeLists.txt): fewer
# values than processes, and a length no process count divides.
bspalg_test(n1 ARGS --size 1 -r 2)
bspalg_test(n1001 ARGS --size 1001 -r 2 --seed 7 --measure-f)

bspalg_error_test(bad-size EXPECT "--size must be an integer from 1" ARGS --size 0)
# the skeleton's failing check: the message and exit status 1
bspalg_error_test(wrong-result EXPECT "bspalg-toy: WRONG RESULT on 2 processes" STATUS 1 ARGS --wrong)
# the skeleton's --checkpoint-every: a time, and only where bsprun gives a checkpoint directory
bspalg_error_test(checkpoint-every-without-dir
                  EXPECT "bspalg-toy: --checkpoint-every needs bsprun --checkpoint-dir DIR or --restart DIR"
                  ARGS --checkpoint-every 5s)
bspalg_error_test(checkpoint-every-bad EXPECT "bspalg-toy: --checkpoint-every must be a time .*not '5x'"
                  ARGS --checkpoint-every 5x)
# --calibrate keeps registrations of its own through the run, which no checkpoint restores
add_test(NAME alg.toy.calibrate-with-checkpoints
         COMMAND ${EXPECT_FAILURE} 10 2 "bspalg-toy: --calibrate cannot be combined with checkpoints"
                 ${BSPRUN} -n 2 --checkpoint-dir ${CMAKE_CURRENT_BINARY_DIR}/no-checkpoints
                 $<TARGET_FILE:bspalg-toy> --calibrate quick)
set_tests_properties(alg.toy.calibrate-with-checkpoints PROPERTIES TIMEOUT 30 LABELS "algorithms;errors;toy")
# the skeleton's human line: counts as people read them (2 M, not 2e+06), never e-notation
if("threads" IN_LIST BSPKIT_TEST_BACKENDS)
  add_test(NAME alg.toy.human-line.threads.p2
           COMMAND ${BSPRUN} -b threads -n 2 $<TARGET_FILE:bspalg-toy> --size 2000000 -r 1)
  set_tests_properties(alg.toy.human-line.threads.p2 PROPERTIES TIMEOUT 30
                       LABELS "bsp;algorithms;threads;toy;quick"
                       PASS_REGULAR_EXPRESSION "W = 2 M addition, H = 1 words, S = 1, check: passed"
                       FAIL_REGULAR_EXPRESSION "[0-9][eE][-+]?[0-9]")
endif()
# the skeleton's h_inout (thesis eq. 2.2) beside h (eq. 2.1): at p = 4 process s puts a word to
# each process after it, so process 0 sends 3, process 3 receives 3 and processes 1 and 2 send
# and receive 3 together: h = 3, h_inout = 3 (not 2 h: the traffic is one-sided), count = 3
if("threads" IN_LIST BSPKIT_TEST_BACKENDS)
  add_test(NAME alg.toy.h-inout.threads.p4
           COMMAND ${BSPRUN} -b threads -n 4 $<TARGET_FILE:bspalg-toy> --size 1000 -r 1 --json -)
  set_tests_properties(alg.toy.h-inout.threads.p4 PROPERTIES TIMEOUT 30
                       LABELS "bsp;algorithms;threads;toy;quick"
                       PASS_REGULAR_EXPRESSION "\"h\": 3, \"h_inout\": 3, \"count\": 3, \"words\": 6")
endif()
