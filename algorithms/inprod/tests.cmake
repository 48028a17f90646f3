# bspalg-inprod against the sequential sum (helpers: tests/algorithms/CMakeLists.txt).
# Lengths below, equal to and not a multiple of p.
bspalg_test(n1 ARGS --size 1 -r 2)
bspalg_test(n1001 ARGS --size 1001 -r 2 --seed 7)

bspalg_error_test(bad-size EXPECT "--size must be an integer from 1" ARGS --size 0)
bspalg_error_test(bad-option EXPECT "unknown option or missing value: '--frobnicate'" ARGS --frobnicate)
