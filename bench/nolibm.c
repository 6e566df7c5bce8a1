/*
 * nolibm: stand-ins for the two libm functions that retry calls, so that
 * the benchmark can measure what loading libm costs at start-up.  A run
 * of "retry -n1 -- true" never calls them; anything else aborts.
 */
#include <stdlib.h>

double	 pow(double, double);
double	 log(double);

double
pow(double x, double y)
{
	(void)x;
	(void)y;
	abort();
}

double
log(double x)
{
	(void)x;
	abort();
}
