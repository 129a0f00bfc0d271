/* perfcast's stand-in for Caliper's annotation macros (they all live in cali.h here). */
#include "cali.h"
