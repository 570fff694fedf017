/*
 * charge_impl.h - what the files of src/core/charge/ share: a table of
 * fixed-width tuples of ids (interning strings' ids, nodes, keys,
 * groups), the string store, and the steps of gf_charge_run.
 */
#ifndef GF_CORE_CHARGE_IMPL_H
#define GF_CORE_CHARGE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gpufleet/charge.h>

#include "util/hash.h"

#define GF__NONE UINT32_MAX

/* Dense ids for tuples of w (1..6) uint32s: id i's tuple is
 * tup[i*w .. i*w+w-1]. */
struct gf__tab {
	int w;
	uint32_t *tup;
	size_t n, alloc;
	struct gf_hmap ix; /* tuple -> id */
};

void gf__tab_init(struct gf__tab *t, int w);
void gf__tab_release(struct gf__tab *t);
/* The id of tuple k; added when absent and add is true (else GF__NONE,
 * as past GF_HMAP_MAX tuples). */
uint32_t gf__tab_get(struct gf__tab *t, const uint32_t *k, bool add);
/* The id of tuple k, or GF__NONE. */
uint32_t gf__tab_find(const struct gf__tab *t, const uint32_t *k);
static inline const uint32_t *gf__tab_tuple(const struct gf__tab *t,
					    uint32_t id)
{
	return t->tup + (size_t)id * (size_t)t->w;
}

/* The string store behind gf_charge_intern. */
struct gf_charge_strs {
	char *bytes; /* each string NUL-terminated */
	size_t len, alloc;
	size_t *off; /* id -> offset */
	size_t n, nalloc;
	struct gf_hmap ix; /* string -> id */
};

/* Parsed parts of an extra, beside in->extra (same index). */
struct gf__extra_parts {
	uint32_t pair_off, npairs; /* label (name, value) ids in pairs */
	uint32_t id_off, nids;	   /* GPU id tokens in ids */
	uint32_t anno_off, nannos; /* annotation (name, value) ids in pairs */
	uint32_t service;	   /* the first service, 0 none */
	uint32_t controller;	   /* "kind:name", "name", 0 none */
};

struct gf_charge_hash {
	struct gf__tab tab; /* (labels, model, mig, gpu_ids) -> extra */
	struct gf__extra_parts *parts;
	size_t parts_alloc;
	uint32_t *pairs; /* name, value, name, value ... */
	size_t npairs, pairs_alloc;
	uint32_t *ids;
	size_t nids, ids_alloc;
	/* ids of the special names, interned at init */
	uint32_t unalloc, idle, filtered, shared;
	uint32_t deployment, statefulset, daemonset; /* controller kinds */
};

/* A record's value for a key (a string id). */
uint32_t gf__charge_value(const struct gf_charge_input *in,
			  const struct gf_charge_record *r,
			  const struct gf_charge_key *k, uint32_t node_model);

/* "'FILE':LINE" of a record or asset into out. */
void gf__charge_where(const struct gf_charge_input *in, uint32_t src,
		      uint32_t line, char *out, size_t size);

/* Sort n uint64 keys ascending (LSD radix, tmp of n entries). */
void gf__charge_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/*
 * The state of one run, built before the steps: nodes, their asset rows,
 * each record's node and GPU units, the telemetry index, the records
 * skipped.
 */
struct gf__charge_node {
	uint32_t cluster, node, model;
	uint32_t first, n; /* asset rows in run->arow[first .. first+n) */
};

struct gf__charge_run {
	const struct gf_charge_input *in;
	const struct gf_charge_opts *o;
	struct gf_charge_result *out;
	struct gf_err *e;
	struct gf__tab nodes; /* (cluster, node) -> node index */
	struct gf__charge_node *node;
	uint32_t *arow;	      /* asset indexes by node, each node's by start */
	uint32_t *rnode;      /* record -> node index (GF__NONE: outside) */
	double *units;	      /* record -> GPU units */
	uint8_t *skip;	      /* record -> skipped (lenient) */
	struct gf__tab slots; /* (node name, GPU id) -> slot */
	uint32_t *tfirst, *tcount; /* slot -> telemetry rows in trow */
	uint32_t *trow;
};

/*
 * Node n's asset rows clipped to [s, t): from row *j on, the next that
 * overlaps it into *c (its part [c->s, c->t)), *j past it; false when
 * none is left.  for (uint32_t j = 0; gf__charge_cut(x, n, s, t, &j, &c);)
 */
struct gf__charge_cut {
	const struct gf_charge_asset *a;
	int64_t s, t;
};

static inline bool gf__charge_cut(const struct gf__charge_run *x,
				  const struct gf__charge_node *n, int64_t s,
				  int64_t t, uint32_t *j,
				  struct gf__charge_cut *c)
{
	while (*j < n->n) {
		const struct gf_charge_asset *a =
			&x->in->asset[x->arow[n->first + (*j)++]];
		c->a = a;
		c->s = a->start_ms > s ? a->start_ms : s;
		c->t = a->end_ms < t ? a->end_ms : t;
		if (c->t > c->s)
			return true;
	}
	return false;
}

int gf__charge_prepare(struct gf__charge_run *x);
int gf__charge_capacity(struct gf__charge_run *x);
void gf__charge_run_release(struct gf__charge_run *x);
/* Record a skipped record (lenient), or fail with the message (strict):
 * 0 when skipped, GF_EINVAL otherwise. */
int gf__charge_bad(struct gf__charge_run *x, size_t r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int gf__charge_steps(struct gf__charge_run *x);

#endif
