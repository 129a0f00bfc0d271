/* CLASS = S with M lowered to 18 so that callgrind runs take seconds (verify20b) */
#define CLASS 'S'
#define M 18
#define CONVERTDOUBLE FALSE
#define COMPILETIME "25 Nov 2026"
#define NPBVERSION "3.0"
#define CS1 "gcc"
#define CS2 "gcc"
#define CS3 "-lm"
#define CS4 "(none)"
#define CS5 "-g"
#define CS6 "-g"
#define CS7 "randdp"
