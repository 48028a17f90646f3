/*
 * compiler.h - what the core asks of the compiler: which names the library exports, and
 * which branches are rare.
 */
#ifndef BSPKIT_COMPILER_H
#define BSPKIT_COMPILER_H

#define BSPK_API __attribute__((visibility("default")))
#define BSPK_LIKELY(x) __builtin_expect(!!(x), 1)
#define BSPK_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif
