/*
 * workload.c - request lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/workload.h>

#include "util/fmt.h"
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
	uint64_t h = (uint64_t)(uint32_t)r->cpu;
	h = h * 0x9e3779b97f4a7c15u ^ (uint64_t)(uint16_t)r->gpu_milli;
	h = h * 0x9e3779b97f4a7c15u ^ r->ngpus;
	h = h * 0x9e3779b97f4a7c15u ^ r->spec;
	return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9u;
}

/*
 * Class ids are the ranks of the distinct (cpu, share, count, models)
 * keys in that order.  The distinct keys are found with a hash table (a
 * workload of millions has a few hundred), and only those are sorted.
 */
void gf_workload_classify(struct gf_workload *w)
{
	size_t slots = 1024;
	int *table = gf_calloc(slots, sizeof(*table)); /* first req + 1 */
	int *uniq = gf_calloc(1024, sizeof(*uniq));    /* first reqs */
	int nuniq = 0, ucap = 1024;
	int *prov = gf_calloc((size_t)w->n + 1, sizeof(*prov));
	for (int i = 0; i < w->n; i++) {
		const struct gf_req *r = &w->reqs[i];
		size_t h = (size_t)class_hash(r) & (slots - 1);
		while (table[h] &&
		       cmp_class(&w->reqs[uniq[table[h] - 1]], r) != 0)
			h = (h + 1) & (slots - 1);
		if (table[h] == 0) {
			if (nuniq == ucap) {
				ucap *= 2;
				uniq = gf_reallocarray(uniq, (size_t)ucap,
						       sizeof(*uniq));
			}
			uniq[nuniq++] = i;
			table[h] = nuniq;
			if ((size_t)nuniq * 2 > slots) { /* grow, rehash */
				gf_free(table);
				slots *= 2;
				table = gf_calloc(slots, sizeof(*table));
				for (int u = 0; u < nuniq; u++) {
					size_t g = (size_t)class_hash(
							   &w->reqs[uniq[u]]) &
						   (slots - 1);
					while (table[g])
						g = (g + 1) & (slots - 1);
					table[g] = u + 1;
				}
				prov[i] = nuniq - 1;
				continue;
			}
		}
		prov[i] = table[h] - 1;
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
		size_t h = (size_t)class_hash(r) & (slots - 1);
		while (cmp_class(&w->reqs[uniq[table[h] - 1]], r) != 0)
			h = (h + 1) & (slots - 1);
		/* more classes than ids: the last ones share one */
		rank[table[h] - 1] = k < UINT16_MAX - 1 ? k : UINT16_MAX - 1;
	}
	for (int i = 0; i < w->n; i++)
		w->reqs[i].cls = (uint16_t)rank[prov[i]];
	w->nclasses = nuniq < UINT16_MAX ? nuniq : UINT16_MAX;
	gf_free(rank);
	gf_free(order);
	gf_free(prov);
	gf_free(uniq);
	gf_free(table);
}
