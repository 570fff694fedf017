/*
 * typical.c - the typical workload FGD measures fragmentation against
 * (frag.h): a default mix while the core knows few jobs, then the mix of
 * the jobs it sees, refreshed now and then.
 *
 * Default: shaped like the Alibaba GPU trace the engine was checked on
 * (reference/fgd-experiment.md): most requests one GPU or less (a whole
 * GPU 40 %, half a GPU 15 %, a quarter 10 %), some multi-GPU training (2,
 * 4 and 8 GPUs: 10 % each) and CPU-only work (5 %).
 *
 * Refresh: from every PENDING and RUNNING job not on MIG, one request per
 * replica (at most REQS_MAX, evenly sampled), with its model as its spec,
 * once at least TYP_MIN replicas are known; the first gf_ctl_schedule
 * after the jobs added since the last build reach a quarter of the
 * replicas it was built from (and at least TYP_MIN).  A rebuild costs one
 * F pass over the nodes and empties the engine's score cache, so it is
 * kept rare on a steady queue and follows a mix that changes.
 *
 * Invariants: ctl->typ/ntyp is what the engine reads (gf_sched_set_typical
 * borrows it); the previous mix is freed only after the engine holds the
 * new one.
 */
#include "core/jobs/typical.h"

#include "core/jobs/ctl_impl.h"
#include "util/mem.h"

#define TYP_MIN	 64
#define REQS_MAX 65536

static const struct {
	int32_t cpu;
	int16_t milli;
	uint16_t ngpus;
	int weight;
} mix[] = {
	{ 8000, 1000, 1, 40 },	{ 4000, 500, 1, 15 },	{ 2000, 250, 1, 10 },
	{ 16000, 1000, 2, 10 }, { 32000, 1000, 4, 10 }, { 64000, 1000, 8, 10 },
	{ 4000, 0, 0, 5 },
};

static void install(struct gf_ctl *ctl, struct gf_typical *t, int n)
{
	struct gf_typical *old = ctl->typ;
	ctl->typ = t;
	ctl->ntyp = n;
	if (ctl->s)
		/* NB: refused for n 0 under FGD, which keeps old */
		(void)!gf_sched_set_typical(ctl->s, t, n);
	gf_free(old);
}

int gf__typical_default(struct gf_ctl *ctl)
{
	int n = 0;
	for (size_t k = 0; k < sizeof(mix) / sizeof(mix[0]); k++)
		n += mix[k].weight;
	struct gf_req *r = gf_calloc((size_t)n, sizeof(*r));
	int i = 0;
	for (size_t k = 0; k < sizeof(mix) / sizeof(mix[0]); k++)
		for (int w = 0; w < mix[k].weight; w++, i++) {
			r[i].cpu = mix[k].cpu;
			r[i].gpu_milli = mix[k].milli;
			r[i].ngpus = mix[k].ngpus;
		}
	struct gf_typical *t;
	int nt = gf_typical_build(r, n, 0.95, &t);
	gf_free(r);
	if (nt < 0)
		return nt;
	install(ctl, t, nt);
	ctl->typ_base = 0;
	ctl->typ_added = 0;
	return 0;
}

static bool counts(const struct gf__jrec *j)
{
	enum gf_job_state st = j->job->state;
	return (st == GF_JOB_PENDING || st == GF_JOB_RUNNING) && j->prof < 0 &&
	       !j->never;
}

void gf__typical_refresh(struct gf_ctl *ctl, bool force)
{
	int64_t known = 0;
	if (!force &&
	    (ctl->typ_added < TYP_MIN || 4 * ctl->typ_added < ctl->typ_base))
		return;
	for (int i = 0; i < ctl->jobs.n; i++)
		if (counts(&ctl->jobs.jr[i]))
			known += ctl->jobs.jr[i].job->spec.replicas;
	ctl->typ_added = 0;
	if (known < TYP_MIN)
		return;
	int64_t stride = (known + REQS_MAX - 1) / REQS_MAX, seen = 0;
	struct gf_req *r = gf_calloc((size_t)(known / stride + 1), sizeof(*r));
	int n = 0;
	for (int i = 0; i < ctl->jobs.n; i++) {
		const struct gf__jrec *j = &ctl->jobs.jr[i];
		if (!counts(j))
			continue;
		for (int k = 0; k < j->job->spec.replicas; k++, seen++)
			if (seen % stride == 0)
				r[n++] = j->req;
	}
	struct gf_typical *t;
	int nt = gf_typical_build(r, n, 0.95, &t);
	gf_free(r);
	if (nt <= 0)
		return;
	install(ctl, t, nt);
	ctl->typ_base = known;
}
