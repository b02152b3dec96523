// The prefetch hint is a static inline function in include/cprefetch.h; SwiftPM needs a source
// file for a C target.
#include "cprefetch.h"
