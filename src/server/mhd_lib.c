/*
 * mhd_lib.c - libmicrohttpd's entry points, filled on first use
 * (mhd_lib.h).
 */
#include "server/mhd_lib.h"

static struct gf_mhd_fns ptrs;
struct gf_dynlib gf_mhd_lib = GF_DYNLIB_INIT(
	"libmicrohttpd.so.12", "libmicrohttpd12", GF_MHD_FUNCS, &ptrs);
