/*
 * dynlib.h - an optional shared library, opened the first time it is
 * used.
 *
 * The gpufleet binary links only what every command needs (hwloc,
 * libyaml, jansson, SQLite).  libpq, libcurl, GLPK, libxml2,
 * libmicrohttpd and GnuTLS bring 40 more libraries with them (Kerberos,
 * LDAP, ICU, OpenSSL, ...): linked, they cost every process about 20 ms
 * of CPU in the dynamic loader, and an ASan process several times that,
 * for a `gpufleet submit` that uses one of them or a `simulate` that
 * uses none.  The adapter that needs one opens it here instead.
 *
 * An adapter lists the entry points it calls in an X macro, makes a
 * struct of pointers of it, and defines each name as its loaded pointer,
 * so the code below calls the library as before (store/pg.c):
 *
 *   #define PQ_FUNCS(X) X(PQclear) X(PQexec)
 *   GF_DYNLIB_DEFINE(pq_lib, pq_fns, "libpq.so.5", "libpq5", PQ_FUNCS);
 *   #define PQclear (GF_DYNLIB_FNS(&pq_lib, pq_fns)->PQclear)
 *
 * Its entry points call gf_dynlib_open() first and report a missing
 * library as an error; a call that comes before any of them still
 * works (GF_DYNLIB_FNS opens the library, and a process that cannot
 * stops with the reason, as the dynamic loader would have at start).
 */
#ifndef GF_UTIL_DYNLIB_H
#define GF_UTIL_DYNLIB_H

#include <stdatomic.h>
#include <stddef.h>

#include "gpufleet/err.h"

struct gf_dynlib {
	const char *soname;	  /* "libpq.so.5" */
	const char *package;	  /* the Debian package that ships it */
	const char *const *names; /* entry points, in the struct's order */
	size_t n;
	void *fns;	  /* n pointers (a struct of them), set once open */
	atomic_int state; /* 0 not tried, 1 open, < 0 could not */
	char why[256];	  /* why it could not, once state < 0 */
};

/* One member per entry point, of the entry point's own type. */
#define GF__DYNLIB_MEMBER(name) __typeof__(name) *name;
#define GF__DYNLIB_NAME(name)	#name,
#define GF__DYNLIB_ONE(name)	+1
#define GF_DYNLIB_STRUCT(tag, FUNCS)                                       \
	struct tag {                                                       \
		FUNCS(GF__DYNLIB_MEMBER)                                   \
	};                                                                 \
	_Static_assert(sizeof(struct tag) ==                               \
			       (0 FUNCS(GF__DYNLIB_ONE)) * sizeof(void *), \
		       "a struct of pointers only")

/* fns: the struct of pointers the library fills (static storage). */
#define GF_DYNLIB_INIT(so, pkg, FUNCS, fns_)                              \
	{                                                                 \
		.soname = (so), .package = (pkg),                         \
		.names = (const char *const[]){ FUNCS(GF__DYNLIB_NAME) }, \
		.n = 0 FUNCS(GF__DYNLIB_ONE), .fns = (fns_),              \
	}

/* A library one .c file uses: the struct of pointers `tag`, its
 * storage, and the static `lib` (one several files use: GF_DYNLIB_STRUCT
 * in their header, GF_DYNLIB_INIT in one .c, as util/glpk_lib.h). */
#define GF_DYNLIB_DEFINE(lib, tag, so, pkg, FUNCS) \
	GF_DYNLIB_STRUCT(tag, FUNCS);              \
	static struct tag lib##_ptrs;              \
	static struct gf_dynlib lib =              \
		GF_DYNLIB_INIT(so, pkg, FUNCS, &lib##_ptrs)

/*
 * Open l's library and fill its pointers, once per process (any thread
 * may call it; later calls answer at once).  0; GF_ENOTSUP naming the
 * library, its package and the loader's reason when it cannot be
 * opened or lacks an entry point.
 */
int gf_dynlib_open(struct gf_dynlib *l, struct gf_err *e) GF_MUST_CHECK;

/* l's pointers, opening the library first if no entry point has; a
 * process that cannot open it stops (exit 127, the reason on stderr). */
const void *gf_dynlib_need(struct gf_dynlib *l);

static inline const void *gf__dynlib_fns(struct gf_dynlib *l)
{
	if (atomic_load_explicit(&l->state, memory_order_acquire) == 1)
		return l->fns;
	return gf_dynlib_need(l);
}
#define GF_DYNLIB_FNS(l, tag) ((const struct tag *)gf__dynlib_fns(l))

#endif
