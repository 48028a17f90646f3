# bspalg-llcs against the sequential references, both kernels (helpers:
# tests/algorithms/CMakeLists.txt): lengths 1, below / above a word (63, 65), not multiples of
# 64 or of G, m != n both ways, grids finer than the strings (empty blocks), alphabets 1, 2, 4,
# 256, alpha given and chosen.
# Small: the check uses the sequential DP up to 5e7 cells, the bit-parallel one beyond.
bspalg_test(dp.n1 ARGS --kernel dp --size 1 --alphabet 1 -r 1)
bspalg_test(dp.uneven ARGS --kernel dp --sizes 1000,3001 --alphabet 4 --alpha 3 -r 2 --seed 3)
bspalg_test(dp.tiny-blocks ARGS --kernel dp --sizes 65,63 --alphabet 256 --alpha 5 -r 2 --seed 5)
# 8000 x 7001 = 5.6e7 cells: checked against the sequential bit-parallel algorithm
bspalg_test(dp.bitpar-checked ARGS --kernel dp --sizes 8000,7001 --alphabet 2 -r 1 --seed 9)
bspalg_test(bitpar.n1 ARGS --kernel bitpar --size 1 --alphabet 2 -r 1)
bspalg_test(bitpar.uneven ARGS --kernel bitpar --sizes 3001,1000 --alphabet 4 --alpha 2 -r 2 --seed 4 --measure-f)
bspalg_test(bitpar.alphabet256 ARGS --kernel bitpar --sizes 4097,200 --alphabet 256 --alpha 5 -r 2 --seed 6)
bspalg_test(bitpar.alphabet1 ARGS --kernel bitpar --sizes 1000,63 --alphabet 1 -r 2)
# 20000 x 12001 = 2.4e8 cells, default alpha: checked against the sequential bit-parallel one
bspalg_test(bitpar.medium ARGS --kernel bitpar --sizes 20000,12001 --alphabet 4 -r 2 --seed 8)

# --schedule thesis (Fig. 5.4: a sync after every block iteration, b's parts fetched with
# bsp_hpget): both kernels, uneven sizes (more alphas, empty blocks: test_llcs_thesis.py).
bspalg_test(thesis.dp ARGS --schedule thesis --kernel dp --sizes 1000,3001 --alpha 3 -r 2 --seed 3)
bspalg_test(thesis.bitpar ARGS --schedule thesis --kernel bitpar --sizes 3001,1000 --alphabet 256 --alpha 2 -r 2 --seed 4)

bspalg_error_test(bad-alphabet EXPECT "--alphabet must be an integer from 1 to 256" ARGS --alphabet 257)
bspalg_error_test(bad-kernel EXPECT "--kernel must be dp or bitpar, not 'simd'" ARGS --kernel simd)
bspalg_error_test(bad-sizes EXPECT "--sizes must be M,N" ARGS --sizes 100)
bspalg_error_test(bad-schedule EXPECT "--schedule must be antidiagonal or thesis, not 'fig'" ARGS --schedule fig)
bspalg_error_test(bad-alpha EXPECT "--alpha must be an integer from 1" ARGS --alpha 0)

# Killed halfway and restarted from its checkpoints (one after every superstep of the
# wavefront): the LLCS of an uninterrupted run; dp passes rows of L down, bitpar carries
# (on threads: the back ends are tested by dp).
bspalg_restart_test(dp KILL 0 ARGS --kernel dp --sizes 3001,1000 --alpha 2 -r 2)
bspalg_restart_test(bitpar ARGS --kernel bitpar --sizes 3001,1000 --alpha 2 -r 2 BACKENDS threads)
# The thesis' schedule protects the part of b fetched for the next block too; dp ends with
# local work after the last sync (the LLCS stays on process P - 1, which is killed).
bspalg_restart_test(thesis-dp KILL last ARGS --schedule thesis --kernel dp --sizes 3001,1000 --alpha 2 -r 2 PROCS 2 BACKENDS threads)
