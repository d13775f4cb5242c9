// Wrappers are static inline in include/CIsal.h; this file gives the target a translation unit.
#include "CIsal.h"
