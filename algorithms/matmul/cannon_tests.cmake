# bspalg-cannon against the sequential triple loop (helpers: tests/algorithms/CMakeLists.txt):
# Cannon-style MatMul (put) and MatMulG (get) on the grid closest to square (1 x 2, 1 x 3, 2 x 2).
bspalg_test(put.n37 ARGS --variant put --size 37 -r 2)
bspalg_test(get.n50 ARGS --variant get --size 50 -r 2 --seed 9)
bspalg_test(put.n3 ARGS --variant put --size 3 -r 1)
# MatMul with bsp_send (G & L's "Send"): 1 x 1, 1 x 3 (only A's blocks travel) and 2 x 2 (both).
bspalg_test(send.n37 ARGS --variant send --size 37 -r 2 --seed 5 PROCS 1 3 4)

bspalg_error_test(bad-variant EXPECT "--variant must be put, get or send, not 'recv'" ARGS --variant recv)

# The local kernels of Kang et al. sec. 6 (the triple loop reading B down its columns, and B
# transposed first) give the same product.
bspalg_test(naive.n37 ARGS --kernel naive --size 37 -r 2)
bspalg_test(transposed.n50 ARGS --kernel transposed --variant get --size 50 -r 2 --seed 4)
bspalg_test(transposed.n3 ARGS --kernel transposed --size 3 -r 1)
bspalg_error_test(bad-kernel EXPECT "--kernel must be blas, naive or transposed, not 'fast'" ARGS --kernel fast)

# Killed halfway and restarted from its checkpoints (one after every superstep; the next
# round's blocks wait in the registered buffers): the product of an uninterrupted run.
bspalg_restart_test(put KILL last ARGS --variant put --size 50 -r 2)
# send: the next round's blocks wait in the message queue, which the checkpoint keeps (the MPI
# back ends' queue across a restart: tests/checkpoint).
bspalg_restart_test(send KILL last ARGS --variant send --size 50 -r 2 PROCS 4 BACKENDS threads)
