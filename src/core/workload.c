/*
 * workload.c - request lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/workload.h>

#include "../util/mem.h"

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
	snprintf(w->names[w->n], GF_REQ_NAME_MAX, "%s", name);
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
	snprintf(w->specs[w->nspecs], GF_SPEC_STR_MAX, "%s", spec);
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
	int *idx = gf_calloc((size_t)w->n, sizeof(*idx));
	for (int i = 0; i < w->n; i++)
		idx[i] = i;
	sorting = w;
	qsort(idx, (size_t)w->n, sizeof(*idx), cmp_name);
	sorting = NULL;
	struct gf_req *r = gf_calloc((size_t)w->n, sizeof(*r));
	char(*nm)[GF_REQ_NAME_MAX] = gf_calloc((size_t)w->n, sizeof(*nm));
	for (int i = 0; i < w->n; i++) {
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

static _Thread_local const struct gf_req *cls_reqs;

static int cmp_class(const void *a, const void *b)
{
	const struct gf_req *x = &cls_reqs[*(const int *)a];
	const struct gf_req *y = &cls_reqs[*(const int *)b];
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->gpu_milli != y->gpu_milli)
		return x->gpu_milli < y->gpu_milli ? -1 : 1;
	if (x->ngpus != y->ngpus)
		return x->ngpus < y->ngpus ? -1 : 1;
	return (x->spec > y->spec) - (x->spec < y->spec);
}

void gf_workload_classify(struct gf_workload *w)
{
	int *idx = gf_calloc((size_t)w->n, sizeof(*idx));
	for (int i = 0; i < w->n; i++)
		idx[i] = i;
	cls_reqs = w->reqs;
	qsort(idx, (size_t)w->n, sizeof(*idx), cmp_class);
	int cls = -1;
	for (int i = 0; i < w->n; i++) {
		if (i == 0 || cmp_class(&idx[i - 1], &idx[i]) != 0)
			cls++;
		if (cls > UINT16_MAX - 1) /* more classes than ids: share */
			cls = UINT16_MAX - 1;
		w->reqs[idx[i]].cls = (uint16_t)cls;
	}
	cls_reqs = NULL;
	w->nclasses = cls + 1;
	gf_free(idx);
}
