/*
 * dynlib.c - optional shared libraries, opened on first use (dynlib.h).
 */
#include "util/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"

/* One lock for every library: each is opened once per process. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int fill(struct gf_dynlib *l, void *dl)
{
	for (size_t i = 0; i < l->n; i++) {
		void *p = dlsym(dl, l->names[i]);
		if (p == NULL) {
			gf_note(l->why, sizeof(l->why),
				"%s (Debian package %s) has no %s: not the "
				"version gpufleet was built for",
				l->soname, l->package, l->names[i]);
			return GF_ENOTSUP;
		}
		/* POSIX guarantees data and function pointers convert. */
		memcpy((char *)l->fns + i * sizeof(p), &p, sizeof(p));
	}
	return 0;
}

static int try_open(struct gf_dynlib *l)
{
	/* RTLD_LOCAL: its symbols serve only the pointers filled here */
	void *dl = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		const char *why = dlerror();
		gf_note(l->why, sizeof(l->why),
			"cannot open %s (Debian package %s): %s", l->soname,
			l->package, why ? why : "dlopen failed");
		return GF_ENOTSUP;
	}
	int rc = fill(l, dl);
	if (rc)
		dlclose(dl);
	return rc;
}

int gf_dynlib_open(struct gf_dynlib *l, struct gf_err *e)
{
	int st = atomic_load_explicit(&l->state, memory_order_acquire);
	if (st == 0) {
		pthread_mutex_lock(&lock);
		st = atomic_load_explicit(&l->state, memory_order_relaxed);
		if (st == 0) {
			st = try_open(l) ? -1 : 1;
			atomic_store_explicit(&l->state, st,
					      memory_order_release);
		}
		pthread_mutex_unlock(&lock);
	}
	if (st == 1)
		return 0;
	return gf_err_set(e, GF_ENOTSUP, "%s", l->why);
}

const void *gf_dynlib_need(struct gf_dynlib *l)
{
	struct gf_err e;
	if (gf_dynlib_open(l, &e)) {
		fprintf(stderr, "gpufleet: error: %s\n", e.msg);
		exit(127);
	}
	return l->fns;
}
