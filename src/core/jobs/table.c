/*
 * table.c - the job table: the records of the jobs the core knows, found
 * by id (util/hash.h's gf_hmap) and listed in submission order, and the
 * lists of jrec indexes other modules keep (gf__ids).
 *
 * Invariants: jr[] never moves a job (jrec indexes are stable; jobs are
 * never removed, final ones stay for listing); by_seq lists every jrec
 * of the table once by ascending seq; ids finds each of them; ids are
 * unique.
 */
#include "core/jobs/table.h"

#include <string.h>

#include "util/hash.h"
#include "util/mem.h"

/* put cannot fail below the index's cap: */
_Static_assert(GF_CTL_MAX_JOBS < GF_HMAP_MAX, "jobs fit the id index");

void gf__ids_push(struct gf__ids *l, int jid)
{
	l->v = gf_grow(l->v, sizeof(*l->v), &l->cap, (size_t)l->n, 64);
	l->v[l->n++] = jid;
}

int gf__ids_find(const struct gf__ids *l, int jid)
{
	for (int k = 0; k < l->n; k++)
		if (l->v[k] == jid)
			return k;
	return -1;
}

int gf__jobtab_slot(struct gf__jobtab *t, struct gf_job *job)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->jr = gf_reallocarray(t->jr, (size_t)t->cap, sizeof(*t->jr));
		t->by_seq =
			gf_reallocarray(t->by_seq, (size_t)t->cap, sizeof(int));
	}
	struct gf__jrec *j = &t->jr[t->n];
	memset(j, 0, sizeof(*j));
	j->job = job;
	return t->n;
}

void gf__seq_insert(const struct gf__jobtab *t, int *ids, int n, int jid)
{
	uint64_t seq = t->jr[jid].job->seq;
	int lo = 0, hi = n; /* the first entry with a larger seq */
	if (n > 0 && t->jr[ids[n - 1]].job->seq < seq)
		lo = n; /* appended in submission order */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (t->jr[ids[mid]].job->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(ids + lo + 1, ids + lo, (size_t)(n - lo) * sizeof(*ids));
	ids[lo] = jid;
}

void gf__jobtab_register(struct gf__jobtab *t, int jid)
{
	gf__seq_insert(t, t->by_seq, t->n, jid);
	int rc = gf_hmap_put(&t->ids, gf_hash_str(t->jr[jid].job->id),
			     (uint32_t)jid);
	(void)rc; /* no fail below GF_HMAP_MAX rows: asserted above */
	t->n++;
}

const struct gf_job *gf__jobtab_at(const struct gf__jobtab *t, int i)
{
	return i >= 0 && i < t->n ? t->jr[t->by_seq[i]].job : NULL;
}

/* The key job_is reads: the table and the id sought. */
struct key {
	const struct gf__jobtab *t;
	const char *id;
};

static bool job_is(const void *key, uint32_t row)
{
	const struct key *k = key;
	return strcmp(k->t->jr[row].job->id, k->id) == 0;
}

int gf__job_find(const struct gf__jobtab *t, const char *id)
{
	if (id == NULL || !memchr(id, '\0', GF_JOB_ID_MAX))
		return -1;
	struct key k = { t, id };
	return (int)gf_hmap_get(&t->ids, gf_hash_str(id), job_is, &k);
}

int gf__job_get(const struct gf__jobtab *t, const char *id, struct gf_err *e)
{
	int jid = gf__job_find(t, id);
	if (jid < 0)
		return gf_err_set(e, GF_ENOTFOUND, "no job '%.*s'",
				  GF_JOB_ID_MAX, id ? id : "");
	return jid;
}

void gf__jobtab_free(struct gf__jobtab *t)
{
	for (int i = 0; i < t->n; i++) {
		gf_job_release(t->jr[i].job);
		gf_free(t->jr[i].job);
	}
	gf_free(t->jr);
	gf_free(t->by_seq);
	gf_hmap_release(&t->ids);
	gf_free(t->running.v);
	gf_free(t->holding.v);
	gf_free(t->order.v);
	gf_free(t->later.v);
	memset(t, 0, sizeof(*t));
}
