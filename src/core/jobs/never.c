/*
 * never.c - jobs that can never be placed on the nodes known now
 * (admission's GF_ENEVER when they were added: no node has their model,
 * matches their selector or can hold a replica, no block holds the gang),
 * looked at again as nodes come and change.
 *
 * Jobs marked never are grouped by what admission reads of them (CPU,
 * memory, GPU kind and size, model, MIG profile, selector, replicas,
 * team).  A node added can only lift a whole group at once, so it costs
 * one admission per group, not per job: 10,000 jobs waiting for a model
 * no node has cost 3 ms per node added when looked at one by one, a few
 * microseconds as one group.  A node updated (labels, block, MIG layout,
 * shape) may make any job never placeable: every job not final is
 * admitted again (O(jobs), known shapes from admission's cache).
 *
 * Invariants: every job not final with never set is in its group's list
 * (lists may also hold stale entries, jobs final or no longer never,
 * dropped when read); a PENDING job marked never has the reason "can
 * never be placed here: " and admission's answer: its group's msg unless
 * the group is fresh (a job joined since).
 */
#include "core/jobs/never.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/admit.h"
#include "core/jobs/ctl_impl.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_state.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/mem.h"

struct gf__nkey {
	int rep; /* a jrec of this key: its spec is the key */
	int *jids;
	int n, cap;
	bool fresh;		  /* a job joined since msg was set */
	char msg[GF_ERR_MSG_MAX]; /* why its jobs are never placeable */
};

static uint64_t key_hash(const struct gf_job_spec *s)
{
	int64_t v[] = { s->cpu_milli, s->memory_mib, s->gpus, s->gpu_milli,
			s->replicas };
	uint64_t h = gf_hash_bytes(v, sizeof(v));
	const char *str[] = { s->gpu_model, s->mig_profile, s->node_selector,
			      s->team };
	for (size_t k = 0; k < sizeof(str) / sizeof(str[0]); k++)
		h = gf_hash_mix(h, gf_hash_str(str[k]));
	return h;
}

static bool same_key(const struct gf_job_spec *a, const struct gf_job_spec *b)
{
	return a->cpu_milli == b->cpu_milli && a->memory_mib == b->memory_mib &&
	       a->gpus == b->gpus && a->gpu_milli == b->gpu_milli &&
	       a->replicas == b->replicas &&
	       strcmp(a->gpu_model, b->gpu_model) == 0 &&
	       strcmp(a->mig_profile, b->mig_profile) == 0 &&
	       strcmp(a->node_selector, b->node_selector) == 0 &&
	       strcmp(a->team, b->team) == 0;
}

/* The key the index's eq reads: a job's spec, and the core. */
struct spec_key {
	const struct gf_ctl *ctl;
	const struct gf_job_spec *spec;
};

static bool key_is(const void *key, uint32_t row)
{
	const struct spec_key *k = key;
	const struct gf__nevers *nv = &k->ctl->nevers;
	return same_key(&k->ctl->jobs.jr[nv->nk[row].rep].job->spec, k->spec);
}

static struct gf__nkey *key_of(struct gf_ctl *ctl, int jid)
{
	struct gf__nevers *nv = &ctl->nevers;
	const struct gf_job_spec *sp = &ctl->jobs.jr[jid].job->spec;
	uint64_t h = key_hash(sp);
	struct spec_key key = { ctl, sp };
	int64_t x = gf_hmap_get(&nv->idx, h, key_is, &key);
	if (x >= 0)
		return &nv->nk[x];
	if (nv->nnk == nv->nk_cap) {
		nv->nk_cap = nv->nk_cap ? nv->nk_cap * 2 : 16;
		nv->nk = gf_reallocarray(nv->nk, (size_t)nv->nk_cap,
					 sizeof(*nv->nk));
	}
	struct gf__nkey *k = &nv->nk[nv->nnk];
	*k = (struct gf__nkey){ .rep = jid };
	int rc = gf_hmap_put(&nv->idx, h, (uint32_t)nv->nnk);
	(void)rc; /* no fail: keys <= jobs < GF_HMAP_MAX */
	nv->nnk++;
	return k;
}

void gf__never_push(struct gf_ctl *ctl, int jid)
{
	struct gf__nkey *k = key_of(ctl, jid);
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 8;
		k->jids = gf_reallocarray(k->jids, (size_t)k->cap, sizeof(int));
	}
	k->jids[k->n++] = jid;
	k->fresh = true;
}

void gf__never_free(struct gf_ctl *ctl)
{
	struct gf__nevers *nv = &ctl->nevers;
	for (int k = 0; k < nv->nnk; k++)
		gf_free(nv->nk[k].jids);
	gf_free(nv->nk);
	gf_hmap_release(&nv->idx);
	nv->nnk = nv->nk_cap = 0;
}

/* The model or profile a job names may exist now: derive it again (its
 * pending figures follow its share). */
static void rederive(struct gf_ctl *ctl, int jid)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	if (j->model != -2 && j->prof != -2)
		return;
	bool pending = j->job->state == GF_JOB_PENDING;
	if (pending)
		gf__pend_count(ctl, j, -1);
	gf__derive(ctl, j);
	if (pending)
		gf__pend_count(ctl, j, +1);
}

/* Job jid never placeable (why) or not: its flag and, when pending, its
 * reason follow. */
static void set_never(struct gf_ctl *ctl, int jid, bool never, const char *why)
{
	struct gf__jrec *j = &ctl->jobs.jr[jid];
	if (!never)
		rederive(ctl, jid);
	if (never && j->job->state == GF_JOB_PENDING)
		gf__reason(j->job, "can never be placed here: %s", why);
	else if (j->never && j->job->state == GF_JOB_PENDING)
		j->job->reason[0] = '\0'; /* the next pass says why it waits */
	j->never = never;
}

/* Admission for job jid now; true when never placeable (e->msg why). */
static bool admit_now(struct gf_ctl *ctl, int jid, struct gf_err *e)
{
	rederive(ctl, jid);
	return gf__admit_spec(ctl, &ctl->jobs.jr[jid].job->spec, false, e) ==
	       GF_ENEVER;
}

static bool live(const struct gf_ctl *ctl, int jid)
{
	const struct gf__jrec *j = &ctl->jobs.jr[jid];
	return j->never && !gf_job_is_final(j->job->state);
}

/* A node came: each group's jobs, by one admission. */
static void groups_again(struct gf_ctl *ctl)
{
	for (int x = 0; x < ctl->nevers.nnk; x++) {
		struct gf__nkey *k = &ctl->nevers.nk[x];
		int n = 0;
		for (int i = 0; i < k->n; i++)
			if (live(ctl, k->jids[i]))
				k->jids[n++] = k->jids[i];
		k->n = n;
		if (n == 0)
			continue;
		struct gf_err e;
		bool never = admit_now(ctl, k->jids[0], &e);
		if (never && !k->fresh && strcmp(k->msg, e.msg) == 0)
			continue; /* their reasons say so already */
		for (int i = 0; i < n; i++)
			set_never(ctl, k->jids[i], never, e.msg);
		gf_note(k->msg, sizeof(k->msg), "%s", e.msg);
		k->fresh = false;
		if (!never)
			k->n = 0;
	}
}

void gf__reconsider(struct gf_ctl *ctl, bool all)
{
	if (!all) {
		groups_again(ctl);
		return;
	}
	for (int x = 0; x < ctl->nevers.nnk; x++)
		ctl->nevers.nk[x].n = 0;
	for (int jid = 0; jid < ctl->jobs.n; jid++) {
		if (gf_job_is_final(ctl->jobs.jr[jid].job->state))
			continue;
		struct gf_err e;
		bool never = admit_now(ctl, jid, &e);
		set_never(ctl, jid, never, e.msg);
		if (never)
			gf__never_push(ctl, jid);
	}
}
