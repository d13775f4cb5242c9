// Wrappers are static inline in include/FuzzZlib.h; this file gives the target a translation unit.
#include "FuzzZlib.h"
