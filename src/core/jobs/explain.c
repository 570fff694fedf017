/*
 * explain.c - why a job waits, in words a job's owner can act on: the
 * resource that is short on the node that comes closest ("hgx-b has 5
 * free GPUs but 700 of 1000 milli-CPU free"), or that every node it may
 * use is not ready or drained; and whether a job could start now at all
 * (so that "reserved for jN" is said only when jN's reservation is what
 * keeps it waiting).
 *
 * Candidates are the nodes the job may use: its selector, its GPU model,
 * a node with GPUs for a GPU job, a node offering its MIG profile.  Each
 * is read as it is now (the engine's free figures); nothing changes.
 * O(nodes) per call: the pass asks for the head job only, and caches the
 * "could it start" answer per request shape.
 */
#include "core/jobs/explain.h"

#include <stdio.h>
#include <string.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/gang.h"
#include "core/jobs/jobs_changes.h"
#include "core/jobs/jobs_mig.h"
#include "util/fmt.h"

/* How many of one replica's resources fit node i (0..3: GPU, CPU,
 * memory; MIG counts as the GPU): numbers only, as it is asked of every
 * candidate node (formatting each, as before, cost the replay of Philly
 * at 6x 280 of its 290 s of CPU). */
static int fits(const struct gf_ctl *ctl, const struct gf__jrec *j,
		const struct gf_req *r, int i)
{
	const struct gf_cnode *n = &ctl->c->nodes[i];
	int ok = 0;
	if (j->prof >= 0)
		ok += gf__mig_free_on(ctl, i, j->prof) > 0;
	else if (r->ngpus > 0 && r->gpu_milli >= GF_GPU_MILLI)
		ok += n->nfree >= r->ngpus;
	else if (r->ngpus > 0)
		ok += n->max_left >= r->gpu_milli;
	else
		ok++;
	ok += n->cpu_left >= r->cpu;
	ok += n->mem_left >= r->mem;
	return ok;
}

/* How node i falls short of one replica, in words: what fits and the
 * first resource that does not, said into why. */
static void shortfall(const struct gf_ctl *ctl, const struct gf__jrec *j,
		      const struct gf_req *r, int i, char *why, size_t size)
{
	const struct gf_cnode *n = &ctl->c->nodes[i];
	const char *name = ctl->c->names[i];
	char gpu[64] = "", lack[96] = "";
	if (j->prof >= 0) {
		int f = gf__mig_free_on(ctl, i, j->prof);
		if (f > 0) {
			gf_note(gpu, sizeof(gpu), "%d free %s", f,
				ctl->mig.prof_name[j->prof]);
		} else {
			gf_note(lack, sizeof(lack), "no free %s instance",
				ctl->mig.prof_name[j->prof]);
		}
	} else if (r->ngpus > 0 && r->gpu_milli >= GF_GPU_MILLI) {
		if (n->nfree >= r->ngpus) {
			gf_note(gpu, sizeof(gpu), "%d free GPUs", n->nfree);
		} else {
			gf_note(lack, sizeof(lack), "%d of %d GPUs free",
				n->nfree, r->ngpus);
		}
	} else if (r->ngpus > 0) {
		if (n->max_left >= r->gpu_milli) {
			gf_note(gpu, sizeof(gpu), "%d milli-GPU free",
				n->max_left);
		} else {
			gf_note(lack, sizeof(lack),
				"%d of %d milli-GPU free on one GPU",
				n->max_left, r->gpu_milli);
		}
	}
	if (n->cpu_left < r->cpu && !lack[0])
		gf_note(lack, sizeof(lack), "%d of %d milli-CPU free",
			n->cpu_left, r->cpu);
	if (n->mem_left < r->mem && !lack[0])
		gf_note(lack, sizeof(lack), "%lld of %lld MiB memory free",
			(long long)n->mem_left, (long long)r->mem);
	if (!lack[0])
		gf_note(lack, sizeof(lack), "no GPUs of its shape together");
	gf_note(why, size, "%.48s has %.40s%s%.60s", name, gpu[0] ? gpu : "",
		gpu[0] ? " but " : "", lack);
}

static bool taking_work(const struct gf_ctl *ctl, int i)
{
	const struct gf__node *x = &ctl->nodes.ns[i];
	return x->state == GF__READY && !x->cordon && !x->drain;
}

void gf__explain(struct gf_ctl *ctl, struct gf__jrec *j, const struct gf_req *r)
{
	int cand = 0, down = 0, best = -1, best_i = -1;
	for (int i = 0; i < ctl->c->n; i++) {
		if (!gf__usable(ctl, j, r, i))
			continue;
		cand++;
		if (!taking_work(ctl, i)) {
			down++;
			continue;
		}
		int ok = fits(ctl, j, r,
			      i); /* the first node that comes closest */
		if (ok > best) {
			best = ok;
			best_i = i;
		}
	}
	if (cand > 0 && down == cand) {
		gf__reason(j->job,
			   "every candidate node is NotReady or draining (%d "
			   "node%s)",
			   cand, cand == 1 ? "" : "s");
	} else if (best_i >= 0 && j->job->spec.replicas == 1) {
		char why[GF_JOB_REASON_MAX];
		shortfall(ctl, j, r, best_i, why, sizeof(why));
		gf__reason(j->job, "%s", why);
	} else if (j->job->spec.replicas > 1) {
		gf__reason(j->job, "gang of %d does not fit one block now",
			   j->job->spec.replicas);
	} else {
		gf__reason(j->job, "no node has room now");
	}
}

bool gf__room_somewhere(struct gf_ctl *ctl, struct gf__jrec *j,
			const struct gf_req *r)
{
	int R = j->job->spec.replicas;
	int64_t sum = 0;
	for (int i = 0; i < ctl->c->n; i++) {
		if (!gf__usable(ctl, j, r, i))
			continue;
		int mf = j->prof >= 0 ? gf__mig_free_on(ctl, i, j->prof) : 0;
		sum += gf__cap(ctl, j, r, &ctl->c->nodes[i], i, mf, R);
		if (sum >= R)
			return true;
	}
	return false;
}
