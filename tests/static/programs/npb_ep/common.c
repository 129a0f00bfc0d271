/* stand-ins for NPB's common/ c_randdp.c (the 46-bit LCG), timers and print (compiled with
   ep.c, not analysed; written for the tests, see LICENSE-NOTE.md) */
#include <stdio.h>
#include <sys/time.h>
static const double r23 = 1.1920928955078125e-07, t23 = 8.388608e+06;
double randlc(double *x, double a)
{
  double r46 = r23 * r23, t46 = t23 * t23, t1, t2, t3, t4, a1, a2, x1, x2, z;
  t1 = r23 * a; a1 = (int) t1; a2 = a - t23 * a1;
  t1 = r23 * (*x); x1 = (int) t1; x2 = *x - t23 * x1;
  t1 = a1 * x2 + a2 * x1; t2 = (int) (r23 * t1); z = t1 - t23 * t2;
  t3 = t23 * z + a2 * x2; t4 = (int) (r46 * t3); *x = t3 - t46 * t4;
  return r46 * (*x);
}
void vranlc(int n, double *x, double a, double *y)
{
  for (int i = 1; i <= n; i++) y[i] = randlc(x, a);
}
static double start[64], elapsed[64];
static double now(void) { struct timeval tv; gettimeofday(&tv, 0); return tv.tv_sec + 1e-6 * tv.tv_usec; }
void timer_clear(int n) { elapsed[n] = 0.0; }
void timer_start(int n) { start[n] = now(); }
void timer_stop(int n) { elapsed[n] += now() - start[n]; }
double timer_read(int n) { return elapsed[n]; }
void c_print_results(char *name, char cclass, int n1, int n2, int n3, int niter,
    int nthreads, double t, double mops, char *optype, int passed_verification,
    char *npbversion, char *compiletime, char *cc, char *clink, char *c_lib, char *c_inc,
    char *cflags, char *clinkflags, char *rand)
{
  printf("%s class %c n1 %d verified %d\n", name, cclass, n1, passed_verification);
}
