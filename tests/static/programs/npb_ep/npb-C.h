/* stand-in for NPB3.0-omp-C's common/npb-C.h: the declarations ep.c uses */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
typedef int boolean;
#define TRUE 1
#define FALSE 0
#define max(a,b) (((a) > (b)) ? (a) : (b))
#define min(a,b) (((a) < (b)) ? (a) : (b))
#define pow2(a) ((a)*(a))
extern double randlc(double *, double);
extern void vranlc(int, double *, double, double *);
extern void timer_clear(int);
extern void timer_start(int);
extern void timer_stop(int);
extern double timer_read(int);
extern void c_print_results(char *name, char cclass, int n1, int n2, int n3, int niter,
    int nthreads, double t, double mops, char *optype, int passed_verification,
    char *npbversion, char *compiletime, char *cc, char *clink, char *c_lib, char *c_inc,
    char *cflags, char *clinkflags, char *rand);
