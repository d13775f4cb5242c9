// Wrappers are static inline in include/CCurl.h; this file gives the target a translation unit.
#include "CCurl.h"
