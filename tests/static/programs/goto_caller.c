/* perfcast test program (issue 20, static34; verify20e J16): a goto in a caller leaves its
   callee undefined; the reason must name the caller, not "the function". */
static int leaf(int x)
{
  int s = 0;
  for (int i = 0; i < x; i++)
    s += i;
  return s;
}

int caller(int n)
{
  int t = 0;
  for (int k = 0; k < n; k++) {
    t += leaf(k);
    if (t > 1000)
      goto done;
  }
done:
  return t;
}

int main(void) { return caller(10) > 0 ? 0 : 1; }
