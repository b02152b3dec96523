#include "creference.h"
int creference_placeholder(void) { return 0; }
