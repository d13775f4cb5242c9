#ifndef CPUSHLINERUNTIME_H
#define CPUSHLINERUNTIME_H
// PushlineRuntime's C side: what Swift has no spelling for.
#include <stdint.h>

/// Keeps the computation of `value` although nothing reads it (an empty asm statement that
/// takes it as input, the usual "do not optimize" barrier; no instruction is emitted). Dedupe
/// loads a batch's table slots ahead of its inserts only so that their cache misses overlap:
/// without this, the optimizer would drop those loads as dead. (A `__builtin_prefetch` there
/// measured slower: a prefetch that misses the TLB may be dropped, a load is not.)
static inline void cpushlineruntime_keep(uint64_t value) { __asm__ volatile("" : : "r"(value)); }

#endif
