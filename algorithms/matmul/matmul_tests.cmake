# bspalg-matmul against the sequential triple loop (every process checks its part of C; helpers:
# tests/algorithms/CMakeLists.txt). Sizes are chosen so that nothing divides evenly: n = 37, 50
# and 101 are not multiples of q^(1/3) nor of the grid's sides, and n = 5 with q = 64 (s = 2)
# leaves the last block row and column empty.

# customized block-cyclic distribution
bspalg_test(blockcyclic.q1.n37 ARGS --dist blockcyclic --q 1 --size 37 -r 1)
bspalg_test(blockcyclic.q8.n50 ARGS --dist blockcyclic --q 8 --size 50 -r 2 --seed 3)
bspalg_test(blockcyclic.q27.n101 ARGS --dist blockcyclic --q 27 --size 101 -r 1)
bspalg_test(blockcyclic.q64.n5 ARGS --dist blockcyclic --q 64 --size 5 -r 1)
# static 2D distribution, rows fetched with hpget
bspalg_test(static2d.q1.n37 ARGS --dist static2d --q 1 --size 37 -r 1)
bspalg_test(static2d.q8.n101 ARGS --dist static2d --q 8 --size 101 -r 2 --seed 5)
bspalg_test(static2d.q27.n50 ARGS --dist static2d --q 27 --size 50 -r 1)
bspalg_test(static2d.q64.n37 ARGS --dist static2d --q 64 --size 37 -r 1)

bspalg_error_test(bad-q EXPECT "--q must be a perfect cube .*not 10" ARGS --q 10)
bspalg_error_test(bad-dist EXPECT "--dist must be blockcyclic or static2d, not 'cyclic'" ARGS --dist cyclic)
bspalg_error_test(bad-size EXPECT "--size must be an integer from 1" ARGS --size -4)
bspalg_error_test(too-large EXPECT "over the BSPlib limit" PROCS 1 SECONDS 30 ARGS --size 20000 --q 1 --no-check)

# Killed and restarted from its checkpoints (one after every logical superstep): the product
# of an uninterrupted run, bit for bit. blockcyclic with remainder cubes (q = 27 at p = 2, q = 8
# at p = 3): killed right after the first checkpoint, whose sync delivered partial products
# (messages) that the restart must add; static2d halfway through the second repetition (on
# threads: the restart's logic is the driver's, the back ends are tested by the others).
bspalg_restart_test(blockcyclic.q27 KILL 1:early ARGS --dist blockcyclic --q 27 --size 50 -r 1 PROCS 2)
bspalg_restart_test(blockcyclic.q8 KILL 1:early ARGS --dist blockcyclic --q 8 --size 50 -r 1 PROCS 3)
bspalg_restart_test(static2d KILL last ARGS --dist static2d --q 27 --size 50 -r 2 BACKENDS threads)
