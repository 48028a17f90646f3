# bspalg-toy against the sequential scan (helpers: tests/algorithms/CMakeLists.txt): fewer
# values than processes, and a length no process count divides.
bspalg_test(n1 ARGS --size 1 -r 2)
bspalg_test(n1001 ARGS --size 1001 -r 2 --seed 7 --measure-f)

bspalg_error_test(bad-size EXPECT "--size must be an integer from 1" ARGS --size 0)
# the skeleton's failing check: the message and exit status 1
bspalg_error_test(wrong-result EXPECT "bspalg-toy: WRONG RESULT on 2 processes" STATUS 1 ARGS --wrong)
