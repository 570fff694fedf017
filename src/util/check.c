/*
 * check.c - the end of a debug build that found its state broken.
 */
#include "util/check.h"

#include <stdio.h>
#include <stdlib.h>

void gf_check_failed(const char *module, const char *msg)
{
	fprintf(stderr, "gpufleet: %s broken: %s\n", module, msg);
	abort();
}
