# bspalg-ftf against the sequential run of the same iterations (helpers:
# tests/algorithms/CMakeLists.txt). A grid no process count divides, with a block of one
# layer (height 3: rows of 2 and 1); the paper's 121 x 4 x 81 once.
bspalg_test(small ARGS --size 13 --depth 3 --height 3 --iters 3 -r 2)
bspalg_test(paper ARGS --iters 2 -r 1 --seed 7 --measure-f PROCS 4)
# more column blocks than columns (odd p: one row of 7): the last four blocks are empty
bspalg_test(narrow ARGS --size 3 --depth 2 --height 5 --iters 2 -r 1 PROCS 7)
# FT.F's ownership: the balanced blocks up to p = 6 (test_ftf_cost.py), processes idle
# beyond (one at p = 7)
bspalg_test(original ARGS --variant original --size 20 --depth 2 --height 9 --iters 2 -r 1 PROCS 7)

bspalg_error_test(bad-depth EXPECT "--depth must be an integer from 2" ARGS --depth 1)
bspalg_error_test(bad-variant EXPECT "--variant" ARGS --variant serial)
