// The target's code is all in its header (static inline); SwiftPM needs one source file.
#include "CPushlineRuntime.h"
