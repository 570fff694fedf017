/*
 * glpk_lib.c - GLPK's entry points, filled on first use (glpk_lib.h).
 */
#include "util/glpk_lib.h"

static struct gf_glpk_fns ptrs;
struct gf_dynlib gf_glpk_lib =
	GF_DYNLIB_INIT("libglpk.so.40", "libglpk40", GF_GLPK_FUNCS, &ptrs);
