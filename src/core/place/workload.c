/*
 * workload.c - request lists.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/workload.h>

#include "util/fmt.h"
#include "util/hash.h"
#include "util/mem.h"

void gf_workload_init(struct gf_workload *w)
{
	memset(w, 0, sizeof(*w));
}

void gf_workload_release(struct gf_workload *w)
{
	gf_free(w->reqs);
	gf_free(w->names);
	gf_free(w->specs);
	w->n = w->cap = w->nspecs = 0;
}

int gf_workload_add(struct gf_workload *w, const char *name,
		    const struct gf_req *r)
{
	if (w->n >= GF_MAX_REQUESTS)
		return GF_ETOOBIG;
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->reqs = gf_reallocarray(w->reqs, (size_t)w->cap,
					  sizeof(*w->reqs));
		w->names = gf_reallocarray(w->names, (size_t)w->cap,
					   sizeof(*w->names));
	}
	w->reqs[w->n] = *r;
	gf_note(w->names[w->n], GF_REQ_NAME_MAX, "%s", name);
	return w->n++;
}

int gf_workload_spec_key(struct gf_workload *w, const char *spec)
{
	if (w->specs == NULL) {
		w->specs = gf_calloc(GF_SPEC_MAX, sizeof(*w->specs));
		w->nspecs = 1; /* 0 = "" */
	}
	if (*spec == '\0')
		return 0;
	for (int i = 1; i < w->nspecs; i++)
		if (strcmp(w->specs[i], spec) == 0)
			return i;
	if (w->nspecs >= GF_SPEC_MAX || strlen(spec) >= GF_SPEC_STR_MAX)
		return GF_ETOOBIG;
	gf_note(w->specs[w->nspecs], GF_SPEC_STR_MAX, "%s", spec);
	return w->nspecs++;
}

/* qsort has no context: the workload being sorted. */
static _Thread_local const struct gf_workload *sorting;

static int cmp_name(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	int c = strcmp(sorting->names[x], sorting->names[y]);
	return c ? c : (x > y) - (x < y);
}

void gf_workload_sort_by_name(struct gf_workload *w)
{
	/* traces and the built-in workload come sorted: one pass says so */
	int i = 1;
	while (i < w->n && strcmp(w->names[i - 1], w->names[i]) <= 0)
		i++;
	if (i >= w->n)
		return;
	int *idx = gf_calloc((size_t)w->n, sizeof(*idx));
	for (i = 0; i < w->n; i++)
		idx[i] = i;
	sorting = w;
	qsort(idx, (size_t)w->n, sizeof(*idx), cmp_name);
	sorting = NULL;
	struct gf_req *r = gf_calloc((size_t)w->n, sizeof(*r));
	char(*nm)[GF_REQ_NAME_MAX] = gf_calloc((size_t)w->n, sizeof(*nm));
	for (i = 0; i < w->n; i++) {
		r[i] = w->reqs[idx[i]];
		memcpy(nm[i], w->names[idx[i]], sizeof(nm[i]));
	}
	gf_free(w->reqs);
	gf_free(w->names);
	w->reqs = r;
	w->names = nm;
	w->cap = w->n;
	gf_free(idx);
}

static int cmp_class(const struct gf_req *x, const struct gf_req *y)
{
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->gpu_milli != y->gpu_milli)
		return x->gpu_milli < y->gpu_milli ? -1 : 1;
	if (x->ngpus != y->ngpus)
		return x->ngpus < y->ngpus ? -1 : 1;
	return (x->spec > y->spec) - (x->spec < y->spec);
}

static _Thread_local const struct gf_req *cls_reqs;

static int cmp_class_idx(const void *a, const void *b)
{
	return cmp_class(&cls_reqs[*(const int *)a],
			 &cls_reqs[*(const int *)b]);
}

static uint64_t class_hash(const struct gf_req *r)
{
	uint64_t h = gf_hash_mix(0, (uint32_t)r->cpu);
	h = gf_hash_mix(h, (uint16_t)r->gpu_milli);
	h = gf_hash_mix(h, r->ngpus);
	return gf_hash_mix(h, r->spec);
}

/* A key of the class index: request r, against the rows of uniq. */
struct cls_key {
	const struct gf_req *reqs;
	const int *uniq;
	const struct gf_req *r;
};

static bool cls_eq(const void *key, uint32_t row)
{
	const struct cls_key *k = key;
	return cmp_class(&k->reqs[k->uniq[row]], k->r) == 0;
}

/*
 * Class ids are the ranks of the distinct (cpu, share, count, models)
 * keys in that order.  The distinct keys are found with a hash index (a
 * workload of millions has a few hundred), and only those are sorted.
 */
void gf_workload_classify(struct gf_workload *w)
{
	struct gf_hmap ix;
	gf_hmap_init(&ix);
	int *uniq = gf_calloc(1024, sizeof(*uniq)); /* first reqs */
	int nuniq = 0, ucap = 1024;
	int *prov = gf_calloc((size_t)w->n + 1, sizeof(*prov));
	for (int i = 0; i < w->n; i++) {
		const struct gf_req *r = &w->reqs[i];
		struct cls_key k = { w->reqs, uniq, r };
		uint64_t h = class_hash(r);
		int64_t u = gf_hmap_get(&ix, h, cls_eq, &k);
		if (u < 0) {
			if (nuniq == ucap) {
				ucap *= 2;
				uniq = gf_reallocarray(uniq, (size_t)ucap,
						       sizeof(*uniq));
			}
			uniq[nuniq] = i;
			/* nuniq <= GF_MAX_REQUESTS, far below GF_HMAP_MAX */
			(void)!gf_hmap_put(&ix, h, (uint32_t)nuniq);
			u = nuniq++;
		}
		prov[i] = (int)u;
	}
	/* rank the distinct keys */
	int *order = gf_calloc((size_t)nuniq + 1, sizeof(*order));
	for (int u = 0; u < nuniq; u++)
		order[u] = uniq[u];
	cls_reqs = w->reqs;
	qsort(order, (size_t)nuniq, sizeof(*order), cmp_class_idx);
	cls_reqs = NULL;
	/* provisional id (index in uniq) -> rank: find each by its key */
	int *rank = gf_calloc((size_t)nuniq + 1, sizeof(*rank));
	for (int k = 0; k < nuniq; k++) {
		const struct gf_req *r = &w->reqs[order[k]];
		struct cls_key key = { w->reqs, uniq, r };
		int64_t u = gf_hmap_get(&ix, class_hash(r), cls_eq, &key);
		/* more classes than ids: the last ones share one */
		rank[u] = k < UINT16_MAX - 1 ? k : UINT16_MAX - 1;
	}
	for (int i = 0; i < w->n; i++)
		w->reqs[i].cls = (uint16_t)rank[prov[i]];
	w->nclasses = nuniq < UINT16_MAX ? nuniq : UINT16_MAX;
	gf_free(rank);
	gf_free(order);
	gf_free(prov);
	gf_free(uniq);
	gf_hmap_release(&ix);
}
