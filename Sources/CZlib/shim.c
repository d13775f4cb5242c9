// Wrappers are static inline in include/CZlib.h; this file gives the target a translation unit.
#include "CZlib.h"
