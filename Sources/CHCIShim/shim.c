#include "chcishim.h"
int chcishim_placeholder(void) { return 0; }
