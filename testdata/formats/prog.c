#include <stdio.h>
#include <stdlib.h>
static double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
double fast(void) { return leaf(20000); }
double slow(int n) {
	double s = leaf(20000);
	for (int i = 0; i < n; i++) s += i * 0.25;
	return s;
}
int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	double t = 0;
	for (int k = 0; k < 5; k++) t += fast() + slow(n);
	printf("%d\n", t > 0);
	return 0;
}
