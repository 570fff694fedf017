/*
 * helpers.h - shared bits of the unit tests: where ../shared is, and
 * loading a recorded topology from it (skipping when it is absent).
 */
#ifndef GF_TEST_HELPERS_H
#define GF_TEST_HELPERS_H

/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufleet/mig.h>
#include <gpufleet/node.h>
#include <gpufleet/rng.h>

#include "topo/hwloc_load.h"

/* A file whole, up to 1 MiB, as a string (the caller frees); NULL when
 * it cannot be opened. */
static inline char *test_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* How many times needle occurs in s (overlapping ones too). */
static inline int test_count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ../shared, or $GPUFLEET_SHARED; tests run from the repository root. */
static inline const char *shared_dir(void)
{
	const char *s = getenv("GPUFLEET_SHARED");
	return s && *s ? s : "../shared";
}

static inline void shared_path(char *out, size_t size, const char *rel)
{
	snprintf(out, size, "%s/%s", shared_dir(), rel);
}

/* The fake libnvidia-ml built beside the tests: BUILD/fake-nvml/, found
 * from a test binary's argv[0] (BUILD/tests/test_x). */
static inline void fake_nvml_path(const char *argv0, char *out, size_t size)
{
	char dir[400];
	snprintf(dir, sizeof(dir), "%s", argv0);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(out, size, "%s/../fake-nvml/libnvidia-ml.so.1", dir);
}

/* Load a shared XML into a new node, or skip the test when absent. */
static inline struct gf_node *load_shared(const char *rel)
{
	char path[512];
	shared_path(path, sizeof(path), rel);
	if (access(path, R_OK) != 0) {
		print_message("shared data absent: %s (set GPUFLEET_SHARED)\n",
			      path);
		skip();
	}
	struct gf_node *n = gf_node_new();
	struct gf_err e;
	struct gf_topo_source src = { .xml_path = path };
	gf_err_clear(&e);
	int rc = gf_topo_load(n, &src, &e);
	if (rc != 0)
		print_message("load %s: %s\n", path, e.msg);
	assert_int_equal(rc, 0);
	char msg[256];
	assert_int_equal(gf_node_check(n, msg, sizeof(msg)), 0);
	return n;
}

/* One of m's valid layouts, drawn evenly by r (no instance busy). */
struct mig_pick {
	long target, seen;
	struct gf_mig_layout out;
};

static inline int mig_pick_cb(const struct gf_mig_layout *l, void *arg)
{
	struct mig_pick *p = arg;
	if (p->seen++ == p->target) {
		p->out = *l;
		return 1;
	}
	return 0;
}

static inline struct gf_mig_layout
random_mig_layout(struct gf_rng *r, const struct gf_mig_model *m)
{
	struct mig_pick p = { 0, 0, { .n = 0 } };
	p.target = (long)gf_rng_below(
		r, (uint64_t)gf_mig_enumerate(m, NULL, NULL));
	gf_mig_enumerate(m, mig_pick_cb, &p);
	return p.out;
}

#endif
